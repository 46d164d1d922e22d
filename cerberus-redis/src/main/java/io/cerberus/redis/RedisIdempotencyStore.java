package io.cerberus.redis;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.support.Durations;
import io.lettuce.core.KeyValue;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Idempotency records on Redis (single server, Sentinel, Cluster): one hash per key,
 * {@code cerberus:{NS:idem:KEY}} (percent-encoded, one hash tag, so one Cluster slot; under the
 * namespace's prefix, like its locks), fields
 * {@code s} (0 in progress, 1 completed), {@code t} token, {@code f} fingerprint, {@code r} result
 * (Base64), {@code x} failure. Each change is one script: the claim writes the record and its
 * expiry together, so a record can never become immortal; every later change checks the token.
 * Completion and release publish on {@code cerberus:{NS:idem:KEY}:c}; a waiting duplicate subscribes
 * to it (through the engine's {@link LockWaiters}: one connection, wake-one, each woken waiter
 * passing the wake-up on as it leaves), then reads the record, then waits.
 *
 * <p>With {@code waitReplicas}, a claim and a completion return only once that many replicas
 * have them ({@code WAIT}), as grants do: a claim they do not acknowledge in time is released and
 * fails; a completion fails (the guard sends it again, and it finds itself done), so a failover
 * cannot lose a record its caller was told about.
 */
final class RedisIdempotencyStore implements IdempotencyStore {
    private final RedisClusterAsyncCommands<String, String> commands;
    private final Duration timeout;
    private final String uri;
    private final LockWaiters waiters;
    private final RedisLink link;
    private final int waitReplicas;
    private final Duration waitTimeout;

    RedisIdempotencyStore(
            RedisLink link, Duration timeout, String uri, LockWaiters waiters, int waitReplicas, Duration waitTimeout) {
        this.link = link;
        this.commands = link.commands();
        this.timeout = timeout;
        this.uri = uri;
        this.waiters = waiters;
        this.waitReplicas = waitReplicas;
        this.waitTimeout = waitTimeout;
    }

    /** @return how many replicas have every write made so far on this key's connection ({@code WAIT}) */
    private long replicated(String id, String what) {
        return Replies.await(
                link.waitForReplicas(key(id), waitReplicas, waitTimeout),
                waitTimeout.plus(timeout),
                uri,
                "wait for " + waitReplicas + " replica(s) to have the " + what + " of idempotency key " + id);
    }

    private EngineUnavailableException unreplicated(String id, String what, long acknowledged, String then) {
        return new EngineUnavailableException(
                "redis engine " + uri + ": only " + acknowledged + " of the " + waitReplicas
                        + " replica(s) asked for (waitReplicas) acknowledged the " + what + " of idempotency key " + id
                        + " within "
                        + Durations.format(waitTimeout) + "; " + then
                        + ". Check the replicas (INFO replication), or lower waitReplicas",
                null);
    }

    static String channel(String id) {
        return key(id) + ":c";
    }

    /**
     * @param id the guard's id, {@code NAMESPACE/KEY}
     * @return {@code cerberus:{NS:idem:KEY}}: under the namespace's prefix, so one ACL pattern per
     *     application covers its records too; lock names are encoded with {@code :} escaped, so no
     *     lock's key can be {@code NS:idem:...}
     */
    static String key(String id) {
        int slash = id.lastIndexOf('/');
        String namespace = slash < 0 ? "" : id.substring(0, slash);
        return LockKeys.PREFIX + LockKeys.encode(namespace, false) + ":idem:"
                + LockKeys.encode(id.substring(slash + 1), true) + "}";
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        CompletableFuture<List<Object>> reply = LockScripts.IDEM_CLAIM.run(
                commands, new String[] {key(id)}, token, fingerprint, Long.toString(Math.max(1, lease.toMillis())));
        List<Object> fields = Replies.await(reply, timeout, uri, "claim idempotency key " + id);
        if (fields.isEmpty()) {
            if (waitReplicas > 0) {
                long acknowledged;
                try {
                    acknowledged = replicated(id, "claim");
                } catch (EngineUnavailableException e) {
                    releaseQuietly(id, token);
                    throw e;
                }
                if (acknowledged < waitReplicas) {
                    releaseQuietly(id, token);
                    throw unreplicated(
                            id,
                            "claim",
                            acknowledged,
                            "the claim was released again, since a failover now could lose it");
                }
            }
            return Optional.empty();
        }
        return Optional.of(record(
                text(fields.get(0)),
                text(fields.get(1)),
                text(fields.get(2)),
                text(fields.get(3)),
                text(fields.get(4))));
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        CompletableFuture<Long> reply = LockScripts.IDEM_RENEW.run(
                commands, new String[] {key(id)}, token, Long.toString(Math.max(1, lease.toMillis())));
        return Replies.await(reply, timeout, uri, "renew idempotency key " + id) == 1L;
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        CompletableFuture<Long> reply = LockScripts.IDEM_COMPLETE.run(
                commands,
                new String[] {key(id)},
                token,
                Base64.getEncoder().encodeToString(result),
                failure ? "1" : "0",
                retention == null ? "" : Long.toString(Math.max(1, retention.toMillis())));
        boolean completed = Replies.await(reply, timeout, uri, "complete idempotency key " + id) == 1L;
        if (completed && waitReplicas > 0) {
            long acknowledged = replicated(id, "completion");
            if (acknowledged < waitReplicas) {
                throw unreplicated(
                        id,
                        "completion",
                        acknowledged,
                        "the result is on the primary only, where a failover could lose it");
            }
        }
        return completed;
    }

    private void releaseQuietly(String id, String token) {
        try {
            release(id, token);
        } catch (RuntimeException e) {
            // it ends with its lease
        }
    }

    @Override
    public boolean release(String id, String token) {
        CompletableFuture<Long> reply = LockScripts.IDEM_RELEASE.run(commands, new String[] {key(id)}, token);
        return Replies.await(reply, timeout, uri, "release idempotency key " + id) == 1L;
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        List<KeyValue<String, String>> fields = Replies.await(
                commands.hmget(key(id), "s", "t", "f", "r", "x").toCompletableFuture(),
                timeout,
                uri,
                "read idempotency key " + id);
        if (fields.isEmpty() || !fields.get(0).hasValue()) {
            return Optional.empty();
        }
        return Optional.of(record(
                value(fields.get(0)),
                value(fields.get(1)),
                value(fields.get(2)),
                value(fields.get(3)),
                value(fields.get(4))));
    }

    @Override
    public void awaitChange(String id, Duration atMost) throws InterruptedException {
        Acquisition waiter = new Acquisition(
                new LockKey("idempotency", id),
                LockMode.EXCLUSIVE,
                UUID.randomUUID().toString(),
                "idempotency waiter",
                atMost);
        long deadline = System.nanoTime() + atMost.toNanos();
        try {
            Replies.await(
                    waiters.listen(waiter, channel(id)),
                    timeout,
                    uri,
                    "subscribe to the changes of idempotency key " + id);
            Optional<IdempotencyRecord> now = read(id);
            if (now.isEmpty() || now.get().completed()) {
                return;
            }
            waiters.await(waiter, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } finally {
            waiters.leave(waiter.token(), false);
        }
    }

    @Override
    public boolean notifiesChanges() {
        return true;
    }

    private static String value(KeyValue<String, String> field) {
        return field.hasValue() ? field.getValue() : null;
    }

    private static String text(Object reply) {
        return reply == null ? null : reply.toString();
    }

    private static IdempotencyRecord record(
            String state, String token, String fingerprint, String result, String failure) {
        boolean completed = "1".equals(state);
        return new IdempotencyRecord(
                completed,
                token == null ? "" : token,
                fingerprint == null ? "" : fingerprint,
                completed && result != null ? Base64.getDecoder().decode(result) : null,
                "1".equals(failure));
    }
}
