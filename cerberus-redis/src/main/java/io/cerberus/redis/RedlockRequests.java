package io.cerberus.redis;

import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * What a Redlock engine asks of one node: the single-server engine's scripts ({@link LockScripts},
 * mode {@code exclusive}), sent without waiting. {@link RedlockNodes} sends them to every node;
 * {@link RedlockEngine} counts the answers.
 */
final class RedlockRequests {
    private RedlockRequests() {}

    /** @return {@code {1, fence}} granted (the fence is the node's own and ignored), {@code {0, ms}} busy */
    static CompletableFuture<List<?>> acquire(
            RedisAsyncCommands<String, String> commands, Acquisition attempt, LockKeys keys) {
        return LockScripts.ACQUIRE.run(
                commands,
                keys.all(false),
                attempt.token(),
                LockMode.EXCLUSIVE.label(),
                millis(attempt.lease()),
                attempt.holder(),
                millis(RedisEngine.STALE_WAITER),
                millis(RedisEngine.RETRY_CAP));
    }

    /** @return whether an acquire reply is a grant */
    static boolean isGrant(List<?> acquireReply) {
        return ((Number) acquireReply.get(0)).longValue() == 1;
    }

    /** @return 1 if the attempt held the lock on the node and released it, else 0 */
    static CompletableFuture<Long> release(
            RedisAsyncCommands<String, String> commands, Acquisition attempt, LockKeys keys) {
        return LockScripts.RELEASE.run(
                commands, keys.all(false), attempt.token(), LockMode.EXCLUSIVE.label(), keys.channel());
    }

    /**
     * The release of a failed attempt, sent with {@code EVAL} so it is one command: a node runs
     * it after the acquire it undoes and before a later acquire of the same attempt, which
     * {@code EVALSHA} followed by {@code EVAL} after a {@code NOSCRIPT} answer would not ensure.
     *
     * @return 1 if the attempt held the lock on the node, else 0
     */
    static CompletableFuture<Long> undo(
            RedisAsyncCommands<String, String> commands, Acquisition attempt, LockKeys keys) {
        return commands.<Long>eval(
                        LockScripts.RELEASE.text(),
                        ScriptOutputType.INTEGER,
                        keys.all(false),
                        attempt.token(),
                        LockMode.EXCLUSIVE.label(),
                        keys.channel())
                .toCompletableFuture();
    }

    /** @return one flag per hold, in order: 1 renewed, 0 no longer held (one script per {@link RedisEngine#RENEW_BATCH} holds) */
    static CompletableFuture<List<Long>> renew(RedisAsyncCommands<String, String> commands, List<Acquisition> all) {
        List<CompletableFuture<List<?>>> batches = new ArrayList<>();
        for (int from = 0; from < all.size(); from += RedisEngine.RENEW_BATCH) {
            List<Acquisition> batch = all.subList(from, Math.min(all.size(), from + RedisEngine.RENEW_BATCH));
            String[] keys = new String[batch.size() * 3];
            String[] args = new String[batch.size() * 3];
            for (int i = 0; i < batch.size(); i++) {
                Acquisition attempt = batch.get(i);
                LockKeys lock = LockKeys.of(attempt.key());
                keys[3 * i] = lock.owner();
                keys[3 * i + 1] = lock.readers();
                keys[3 * i + 2] = lock.readerInfo();
                args[3 * i] = attempt.token();
                args[3 * i + 1] = attempt.mode().label();
                args[3 * i + 2] = millis(attempt.lease());
            }
            batches.add(LockScripts.RENEW.run(commands, keys, args));
        }
        return CompletableFuture.allOf(batches.toArray(new CompletableFuture<?>[0]))
                .thenApply(done -> {
                    List<Long> flags = new ArrayList<>(all.size());
                    for (CompletableFuture<List<?>> batch : batches) {
                        for (Object flag : batch.join()) {
                            flags.add(((Number) flag).longValue());
                        }
                    }
                    return flags;
                });
    }

    /** @return 1 if the lock is held on the node, else 0 */
    static CompletableFuture<Long> isLocked(RedisAsyncCommands<String, String> commands, LockKeys keys) {
        return LockScripts.IS_LOCKED.run(commands, new String[] {keys.owner(), keys.readers()});
    }

    /** @return the names of the locks of a namespace held on the node, found with {@code SCAN} (never {@code KEYS}) */
    static CompletableFuture<Set<String>> lockNames(
            RedisAsyncCommands<String, String> commands, String namespace, String prefix) {
        ScanArgs scan = ScanArgs.Builder.matches(LockKeys.scanPattern(namespace, prefix))
                .limit(1000);
        return scan(commands, scan, ScanCursor.INITIAL, prefix, new TreeSet<>());
    }

    private static CompletableFuture<Set<String>> scan(
            RedisAsyncCommands<String, String> commands,
            ScanArgs scan,
            ScanCursor cursor,
            String prefix,
            Set<String> names) {
        return commands.scan(cursor, scan).toCompletableFuture().thenCompose(page -> {
            for (String key : page.getKeys()) {
                LockKeys.lockNameOfHoldKey(key)
                        .filter(name -> name.startsWith(prefix))
                        .ifPresent(names::add);
            }
            return page.isFinished()
                    ? CompletableFuture.completedFuture(names)
                    : scan(commands, scan, page, prefix, names);
        });
    }

    /** @return the {@code inspect.lua} reply of each named lock on the node, in order */
    static CompletableFuture<List<List<?>>> inspect(
            RedisAsyncCommands<String, String> commands, String namespace, List<String> names) {
        List<CompletableFuture<List<?>>> replies = new ArrayList<>();
        for (String name : names) {
            LockKeys keys = LockKeys.of(new LockKey(namespace, name));
            replies.add(
                    LockScripts.INSPECT.run(commands, new String[] {keys.owner(), keys.readers(), keys.readerInfo()}));
        }
        return CompletableFuture.allOf(replies.toArray(new CompletableFuture<?>[0]))
                .thenApply(done ->
                        replies.stream().<List<?>>map(CompletableFuture::join).toList());
    }

    private static String millis(Duration duration) {
        return Long.toString(Math.max(1, duration.toMillis()));
    }
}
