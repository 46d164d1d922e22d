package io.cerberus.check.recipe;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The negative control {@code cerberus check --idempotency --unchecked-guard}: a hand-rolled
 * idempotency guard over Redis as many applications write one, <em>without</em> owner-checked
 * changes. It claims a key with {@code SET NX PX lease} (value {@code P|payload|submission}),
 * completes with a plain {@code SET} ({@code D|payload|result}) and releases a failed attempt with
 * a plain {@code DEL}. An attempt whose lease ran out (paused past it) therefore still completes
 * over the attempt that took the key over, and its release deletes that attempt's claim, so a third
 * runs the operation again. Cerberus's stores check the attempt token in every change; this one
 * shows what the checker finds when that check is missing. No renewal either: the operation is
 * shorter than the lease unless a fault stops it.
 */
public final class UncheckedRedisGuard implements AutoCloseable {
    /** What a claim found. */
    public sealed interface Claim permits Run, Replay, Mismatch, InProgress {}

    /** The key was free: the caller runs the operation. */
    record Run() implements Claim {}

    /** The key was completed: its result. */
    public record Replay(String result) implements Claim {}

    /** The key was used with another payload. */
    public record Mismatch() implements Claim {}

    /** Another attempt held the key for the whole wait. */
    public record InProgress() implements Claim {}

    private static final String PREFIX = "cerberus-check-unchecked:";
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final Duration lease;

    public UncheckedRedisGuard(String redisUri, Duration lease) {
        RedisURI uri = RedisURI.create(redisUri);
        uri.setTimeout(Duration.ofSeconds(2)); // the first connection of a cold JVM takes more than half a second
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
        this.redis = connection.sync();
        this.lease = lease;
    }

    /**
     * Claims the key, waiting up to {@code waitAtMost} while another attempt holds it (polling every 20 ms).
     *
     * @return what the caller does next
     */
    public Claim claim(long key, String payload, String submission, Duration waitAtMost) throws InterruptedException {
        long deadline = System.nanoTime() + waitAtMost.toNanos();
        while (true) {
            if ("OK"
                    .equals(redis.set(
                            PREFIX + key,
                            "P|" + payload + "|" + submission,
                            SetArgs.Builder.nx().px(lease.toMillis())))) {
                return new Run();
            }
            Optional<String> value = Optional.ofNullable(redis.get(PREFIX + key));
            if (value.isPresent()) {
                String[] parts = value.get().split("\\|", 3);
                if (!parts[1].equals(payload)) {
                    return new Mismatch();
                }
                if (parts[0].equals("D")) {
                    return new Replay(parts[2]);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                return new InProgress();
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    /** Stores the result with a plain SET: no check that this attempt still owns the key. */
    public void complete(long key, String payload, String result) {
        redis.set(PREFIX + key, "D|" + payload + "|" + result, SetArgs.Builder.ex(Duration.ofHours(1)));
    }

    /** Releases the key with a plain DEL: no check that this attempt still owns it. */
    public void release(long key) {
        redis.del(PREFIX + key);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
}
