package io.cerberus.redis;

import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import io.lettuce.core.KeyValue;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Idempotency records on Redis (single server, Sentinel, Cluster): one hash per key,
 * {@code cerberus:{idem:ID}} (ID percent-encoded, one hash tag, so one Cluster slot), fields
 * {@code s} (0 in progress, 1 completed), {@code t} token, {@code f} fingerprint, {@code r} result
 * (Base64), {@code x} failure. Each change is one script: the claim writes the record and its
 * expiry together, so a record can never become immortal; every later change checks the token.
 */
final class RedisIdempotencyStore implements IdempotencyStore {
    private final RedisClusterAsyncCommands<String, String> commands;
    private final Duration timeout;
    private final String uri;

    RedisIdempotencyStore(RedisClusterAsyncCommands<String, String> commands, Duration timeout, String uri) {
        this.commands = commands;
        this.timeout = timeout;
        this.uri = uri;
    }

    static String key(String id) {
        return "cerberus:{idem:" + LockKeys.encode(id, true) + "}";
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        CompletableFuture<List<Object>> reply = LockScripts.IDEM_CLAIM.run(commands, new String[] {key(id)}, token, fingerprint,
                Long.toString(Math.max(1, lease.toMillis())));
        List<Object> fields = Replies.await(reply, timeout, uri, "claim idempotency key " + id);
        if (fields.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(record(text(fields.get(0)), text(fields.get(1)), text(fields.get(2)), text(fields.get(3)), text(fields.get(4))));
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        CompletableFuture<Long> reply = LockScripts.IDEM_RENEW.run(commands, new String[] {key(id)}, token,
                Long.toString(Math.max(1, lease.toMillis())));
        return Replies.await(reply, timeout, uri, "renew idempotency key " + id) == 1L;
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        CompletableFuture<Long> reply = LockScripts.IDEM_COMPLETE.run(commands, new String[] {key(id)}, token,
                Base64.getEncoder().encodeToString(result), failure ? "1" : "0",
                retention == null ? "" : Long.toString(Math.max(1, retention.toMillis())));
        return Replies.await(reply, timeout, uri, "complete idempotency key " + id) == 1L;
    }

    @Override
    public boolean release(String id, String token) {
        CompletableFuture<Long> reply = LockScripts.IDEM_RELEASE.run(commands, new String[] {key(id)}, token);
        return Replies.await(reply, timeout, uri, "release idempotency key " + id) == 1L;
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        List<KeyValue<String, String>> fields = Replies.await(commands.hmget(key(id), "s", "t", "f", "r", "x").toCompletableFuture(),
                timeout, uri, "read idempotency key " + id);
        if (fields.isEmpty() || !fields.get(0).hasValue()) {
            return Optional.empty();
        }
        return Optional.of(record(value(fields.get(0)), value(fields.get(1)), value(fields.get(2)), value(fields.get(3)),
                value(fields.get(4))));
    }

    private static String value(KeyValue<String, String> field) {
        return field.hasValue() ? field.getValue() : null;
    }

    private static String text(Object reply) {
        return reply == null ? null : reply.toString();
    }

    private static IdempotencyRecord record(String state, String token, String fingerprint, String result, String failure) {
        boolean completed = "1".equals(state);
        return new IdempotencyRecord(completed, token == null ? "" : token, fingerprint == null ? "" : fingerprint,
                completed && result != null ? Base64.getDecoder().decode(result) : null, "1".equals(failure));
    }
}
