package io.cerberus.redis;

import io.cerberus.Fence;
import io.cerberus.fencing.FenceKeeper;
import io.cerberus.fencing.StaleFenceException;
import io.cerberus.spi.support.Durations;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Fenced writes and reads of the application's own data in Redis, protected by a Cerberus lock on any
 * engine: each call carries the holder's {@link Fence} ({@code Fence.of(lease)}), and the data refuses a
 * call whose fence is older than the newest it has seen, with a {@link StaleFenceException}. So a
 * holder that was paused past its lease cannot overwrite the work of the holder after it.
 *
 * <p>Layout: the newest fence of data key {@code K} is kept in the string key {@link #fenceKey(String)
 * cerberus:fence:{T}:K} ({@code EPOCH:TOKEN}), where {@code T} is K's hash tag, or K itself when it has none;
 * so both keys are in one Redis Cluster slot. Keys starting with {@code cerberus:fence:} are reserved. The
 * fence lives as long as the data (through {@link #del}: a tombstone, so an older holder cannot create the key
 * again), and for ever by default; {@link #keepingFencesFor} bounds that.
 *
 * <p>Each call is one Lua script ({@code EVALSHA}, {@code EVAL} if the server lost it), atomic: compare
 * (epoch, token) with the stored fence, then change the data and store the caller's fence, or refuse and
 * change nothing. An equal fence is accepted (the same holder again). Reads ({@link #get}, {@link #hget})
 * also store the reader's fence: a holder that read must be able to write back without an older holder
 * writing in between. Change fenced data only through this class, or the fence protects nothing.
 *
 * <p>Thread-safe, as the Lettuce connection it uses. Failures of the connection are Lettuce's exceptions
 * ({@code RedisCommandTimeoutException} after the connection's timeout, {@code RedisCommandExecutionException}
 * for a refused command such as a key of the wrong type).
 */
public final class FencedRedis {
    /** The prefix of every fence key. */
    static final String FENCE_KEY_PREFIX = "cerberus:fence:";

    private final RedisClusterAsyncCommands<String, String> commands;
    private final Duration timeout;
    private final String retention;

    private FencedRedis(RedisClusterAsyncCommands<String, String> commands, Duration timeout, String retention) {
        this.commands = commands;
        this.timeout = timeout;
        this.retention = retention;
    }

    /**
     * @param connection the application's connection to a Redis server (or a Sentinel-managed master); it
     *     stays the caller's to close
     * @return fenced commands on it, keeping fences for ever, waiting up to the connection's timeout
     */
    public static FencedRedis of(StatefulRedisConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new FencedRedis(connection.async(), connection.getTimeout(), "");
    }

    /**
     * @param connection the application's connection to a Redis Cluster; it stays the caller's to close
     * @return fenced commands on it, keeping fences for ever, waiting up to the connection's timeout
     */
    public static FencedRedis of(StatefulRedisClusterConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new FencedRedis(connection.async(), connection.getTimeout(), "");
    }

    /**
     * How long a fence outlives its data (after a {@link #del} or the data's expiry). After that an older
     * holder could create the key again: choose more than the longest a holder may be paused after its lease
     * ended. The fences of data without an expiry are kept as long as the data.
     *
     * @param retention at least a millisecond
     * @return fenced commands on the same connection with that retention
     * @throws IllegalArgumentException if {@code retention} is shorter than a millisecond
     */
    public FencedRedis keepingFencesFor(Duration retention) {
        return new FencedRedis(commands, timeout, Long.toString(millis(retention, "a fence retention")));
    }

    /**
     * @param key a data key
     * @return the key of its fence: {@code cerberus:fence:{T}:key}, {@code T} the key's hash tag or the key
     * @throws IllegalArgumentException if the key is empty, is itself a fence key, or contains {@code '}'}
     *     without a hash tag (no other key could share its Cluster slot)
     */
    public static String fenceKey(String key) {
        return FENCE_KEY_PREFIX + "{" + slotPart(key) + "}:" + key;
    }

    /**
     * {@code SET key value} (no expiry) if {@code fence} is not older than the key's newest.
     *
     * @throws StaleFenceException if the key has seen a newer fence; nothing was written
     * @throws IllegalArgumentException if the key is not allowed ({@link #fenceKey})
     */
    public void set(Fence fence, String key, String value) {
        written(LockScripts.FENCED_SET, fence, key, List.of(Objects.requireNonNull(value, "value"), ""));
    }

    /**
     * {@code SET key value PX expiry} if {@code fence} is not older than the key's newest.
     *
     * @throws StaleFenceException if the key has seen a newer fence; nothing was written
     * @throws IllegalArgumentException if the key is not allowed, or the expiry is under a millisecond
     */
    public void set(Fence fence, String key, String value, Duration expiry) {
        String px = Long.toString(millis(expiry, "an expiry"));
        written(LockScripts.FENCED_SET, fence, key, List.of(Objects.requireNonNull(value, "value"), px));
    }

    /**
     * {@code HSET key field value} if {@code fence} is not older than the key's newest.
     *
     * @throws StaleFenceException if the key has seen a newer fence; nothing was written
     */
    public void hset(Fence fence, String key, String field, String value) {
        hset(fence, key, Map.of(field, value));
    }

    /**
     * {@code HSET key field value ...} (one or more fields, in one atomic step) if {@code fence} is not older
     * than the key's newest. The hash keeps its expiry, if it has one.
     *
     * @throws StaleFenceException if the key has seen a newer fence; nothing was written
     * @throws IllegalArgumentException if {@code fields} is empty or the key is not allowed
     */
    public void hset(Fence fence, String key, Map<String, String> fields) {
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("a fenced HSET of '" + key + "' needs at least one field");
        }
        List<String> args = new ArrayList<>(2 * fields.size());
        fields.forEach((field, value) -> {
            args.add(Objects.requireNonNull(field, "field"));
            args.add(Objects.requireNonNull(value, "value of field " + field));
        });
        written(LockScripts.FENCED_HSET, fence, key, args);
    }

    /**
     * {@code DEL key} if {@code fence} is not older than the key's newest. The fence stays (a tombstone) for
     * the retention ({@link #keepingFencesFor}; for ever by default), so an older holder cannot create the key
     * again.
     *
     * @return whether the key existed
     * @throws StaleFenceException if the key has seen a newer fence; nothing was deleted
     */
    public boolean del(Fence fence, String key) {
        return ((Long) written(LockScripts.FENCED_DEL, fence, key, List.of()).get(2)) == 1L;
    }

    /**
     * {@code GET key} as a holder: reads the value and records {@code fence} as the key's newest, so that no
     * older holder can write after this read.
     *
     * @return the value, empty if the key does not exist
     * @throws StaleFenceException if the key has seen a newer fence; nothing was read or recorded
     */
    public Optional<String> get(Fence fence, String key) {
        return value(written(LockScripts.FENCED_GET, fence, key, List.of()));
    }

    /**
     * {@code HGET key field} as a holder, recording {@code fence} as {@link #get} does.
     *
     * @return the field's value, empty if the key or the field does not exist
     * @throws StaleFenceException if the key has seen a newer fence; nothing was read or recorded
     */
    public Optional<String> hget(Fence fence, String key, String field) {
        return value(written(LockScripts.FENCED_HGET, fence, key, List.of(Objects.requireNonNull(field, "field"))));
    }

    /**
     * A {@link FenceKeeper} in this Redis: admitting a fence for a resource is a fenced {@link #get GET} of
     * the key named as the resource (what is stored under it, if anything, is read and dropped), so a
     * resource and a data key of the same name share one fence.
     *
     * @return the keeper
     */
    public FenceKeeper keeper() {
        return (resource, fence) -> get(fence, FenceKeeper.checkedResource(resource));
    }

    /**
     * Reads, without recording anything, the newest fence the key has seen (for monitoring and tests).
     *
     * @return that fence, empty if none is kept (never fenced, or the retention passed)
     */
    public Optional<Fence> fence(String key) {
        return Optional.ofNullable(await(commands.get(fenceKey(key)))).map(Fence::parse);
    }

    /** Runs a fenced script; @return its reply if the fence was accepted. */
    private List<Object> written(LockScripts script, Fence fence, String key, List<String> more) {
        Objects.requireNonNull(fence, "fence");
        String[] keys = {key, fenceKey(key)};
        List<String> args = new ArrayList<>(3 + more.size());
        args.add(Long.toString(fence.epoch()));
        args.add(Long.toString(fence.token()));
        args.add(retention);
        args.addAll(more);
        List<Object> reply = await(script.<List<Object>>run(commands, keys, args.toArray(String[]::new)));
        if ((Long) reply.get(0) != 1L) {
            throw new StaleFenceException("Redis key '" + key + "'", fence, Fence.parse((String) reply.get(1)));
        }
        return reply;
    }

    private static Optional<String> value(List<Object> reply) {
        return (Long) reply.get(2) == 1L ? Optional.of((String) reply.get(3)) : Optional.empty();
    }

    /** Waits as Lettuce's synchronous commands do, with their exceptions. */
    private <T> T await(CompletionStage<T> reply) {
        CompletableFuture<T> future = reply.toCompletableFuture();
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(false);
            throw new RedisCommandTimeoutException("a fenced command got no answer within " + Durations.format(timeout)
                    + " (the connection's timeout)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException known ? known : new RedisException(e.getCause());
        }
    }

    /** @return what decides the key's slot: its hash tag, or the whole key (refused if it has a '}') */
    private static String slotPart(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("a fenced Redis key must not be empty");
        }
        if (key.startsWith(FENCE_KEY_PREFIX)) {
            throw new IllegalArgumentException(
                    "'" + key + "' is a fence key (prefix " + FENCE_KEY_PREFIX + "), reserved for the fences");
        }
        int open = key.indexOf('{');
        int close = open < 0 ? -1 : key.indexOf('}', open + 1);
        if (close > open + 1) {
            return key.substring(open + 1, close);
        }
        if (key.indexOf('}') >= 0) {
            throw new IllegalArgumentException("a fenced Redis key with a '}' must have a hash tag ({tag} with at"
                    + " least one character), or no key could share its Cluster slot with its fence: '" + key + "'");
        }
        return key;
    }

    private static long millis(Duration duration, String what) {
        Objects.requireNonNull(duration, what);
        if (duration.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException(
                    what + " must be at least a millisecond, was " + Durations.format(duration));
        }
        return duration.toMillis();
    }
}
