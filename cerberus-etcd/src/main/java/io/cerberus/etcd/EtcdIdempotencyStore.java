package io.cerberus.etcd;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Idempotency records in etcd: one key per record ({@link LockKeys#idempotencyKey}), its value in
 * the format of {@link IdempotencyValues}, its expiry an etcd lease, so the server's clock ends a
 * record and no client clock is trusted.
 *
 * <p><b>Transitions.</b> A claim grants a lease of the claim's length (whole seconds, rounded up)
 * and puts the IN_PROGRESS value on it in a transaction guarded by "create revision is 0"; if the
 * key existed, the transaction reads it instead and the unused lease is revoked in the background.
 * Complete and release are transactions guarded by "mod revision is still the claim's": complete
 * puts the COMPLETED value on a retention lease ({@link RetentionLeases}; none when kept for ever),
 * release deletes; then the claim's lease is revoked in the background. Renew reads the key, checks
 * that it is this token's IN_PROGRESS record, and sends one keep-alive of the claim's lease.
 *
 * <p><b>Why it is safe.</b> Nothing but this token's complete or release changes an IN_PROGRESS
 * record before its lease ends, and when the lease ends etcd deletes the key, so a later claim
 * creates it anew with a higher revision: a stale owner's compare fails, and its keep-alive finds
 * its lease gone. A claim's revision is kept here to save a read; every change compares it in etcd.
 * Every request may be resent ({@link EtcdRequests}): a resent claim finds and owns its record; a
 * resent complete finds it COMPLETED by its token; a resent release finds the key gone while the
 * claim's lease lives, which only its own delete can do; both report success.
 *
 * <p><b>Costs.</b> Claim: two round trips (grant, transaction). Complete: one (a second when the
 * shared retention lease must be granted anew). Release: one. Renew: two (read, keep-alive).
 * Read: one. A waiting duplicate: one read and one watch per change.
 */
final class EtcdIdempotencyStore implements IdempotencyStore {
    private static final System.Logger LOG = System.getLogger(EtcdIdempotencyStore.class.getName());

    /** A claim: its lease, the revision of its put, the fingerprint it was made with, when and for how long. */
    private record Claim(long leaseId, long revision, String fingerprint, long claimedAtNanos, long seconds) {
        boolean surelyOver(long now) {
            return now - claimedAtNanos > TimeUnit.SECONDS.toNanos(2 * seconds);
        }
    }

    /** At most this many claims are remembered; forgetting one only costs a read later. */
    private static final int MAX_REMEMBERED = 10_000;

    private final Client client;
    private final EtcdRequests requests;
    private final LockKeys keys;
    private final Runnable ensureOpen;
    private final RetentionLeases retentionLeases;
    private final Map<String, Claim> claims = new ConcurrentHashMap<>();

    EtcdIdempotencyStore(Client client, EtcdRequests requests, LockKeys keys, Runnable ensureOpen) {
        this.client = client;
        this.requests = requests;
        this.keys = keys;
        this.ensureOpen = ensureOpen;
        this.retentionLeases = new RetentionLeases(client.getLeaseClient(), requests);
    }

    private static String claimOf(String id, String token) {
        return id + '\u0000' + token;
    }

    private static long claimSeconds(Duration lease) {
        return Math.max(1, lease.getSeconds() + (lease.getNano() > 0 ? 1 : 0));
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        ensureOpen.run();
        ByteSequence key = keys.idempotencyKey(id);
        long seconds = claimSeconds(lease);
        for (int attempt = 1; ; attempt++) {
            // a resent grant may leave an unused lease behind; it ends by itself after the TTL
            long leaseId = requests.call(
                            "grant the lease of idempotency key " + id,
                            () -> client.getLeaseClient().grant(seconds))
                    .getID();
            TxnResponse reply;
            try {
                reply = requests.call(
                        "claim idempotency key " + id,
                        () -> client.getKVClient()
                                .txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(
                                        Op.put(
                                                key,
                                                IdempotencyValues.inProgress(token, fingerprint, leaseId),
                                                PutOption.builder()
                                                        .withLeaseId(leaseId)
                                                        .build()),
                                        Op.get(key, GetOption.DEFAULT))
                                .Else(Op.get(key, GetOption.DEFAULT))
                                .commit());
            } catch (EtcdRefusedException e) {
                if (e.isLeaseGone() && attempt < 2) {
                    continue; // the new lease ran out before the claim reached etcd: a slow network; once more
                }
                throw e;
            }
            // both branches read the key in the transaction's own revision: it is there
            KeyValue kv = reply.getGetResponses().get(0).getKvs().get(0);
            IdempotencyValues.Stored stored = IdempotencyValues.decode(kv.getValue());
            if (stored.inProgressOf(token)) {
                // created here, or by an earlier send of this very request
                remember(
                        id,
                        token,
                        new Claim(stored.claimLease(), kv.getModRevision(), fingerprint, System.nanoTime(), seconds));
                if (stored.claimLease() != leaseId) {
                    revokeLater(leaseId);
                }
                return Optional.empty();
            }
            revokeLater(leaseId);
            return Optional.of(stored.record());
        }
    }

    /** Sends a keep-alive of the claim's lease, which restores the TTL it was claimed with ({@code lease} is not used). */
    @Override
    public boolean renew(String id, String token, Duration lease) {
        ensureOpen.run();
        ByteSequence key = keys.idempotencyKey(id);
        Optional<Claim> found = claimIn(read(key, id), token);
        Claim known = claims.get(claimOf(id, token));
        if (found.isEmpty() || known != null && known.revision() != found.get().revision()) {
            if (known != null) {
                settled(id, token, known);
            }
            return false;
        }
        long leaseId = found.get().leaseId();
        try {
            LeaseKeepAliveResponse reply = requests.call(
                    "renew the lease of idempotency key " + id,
                    () -> client.getLeaseClient().keepAliveOnce(leaseId));
            return reply.getTTL() > 0;
        } catch (EtcdRefusedException e) {
            if (e.isLeaseGone()) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        if (result.length > IdempotencyValues.MAX_RESULT_BYTES) {
            throw new IllegalArgumentException(
                    "an idempotency result of " + result.length + " bytes is more than etcd can store in"
                            + " one record: at most " + IdempotencyValues.MAX_RESULT_BYTES
                            + " bytes (etcd's request limit of 1.5 MiB,"
                            + " --max-request-bytes, less 8 KiB for the key and the record's fields); store a reference to the result instead");
        }
        ensureOpen.run();
        ByteSequence key = keys.idempotencyKey(id);
        Claim claim = claims.get(claimOf(id, token));
        if (claim == null) {
            GetResponse read = read(key, id);
            Optional<Claim> owned = claimIn(read, token);
            if (owned.isEmpty()) {
                // not ours in progress; completed by this token means an earlier send of this complete applied
                return decodedFirst(read)
                        .filter(stored -> stored.completedBy(token))
                        .isPresent();
            }
            claim = owned.get();
        }
        Claim ours = claim;
        for (int attempt = 1; ; attempt++) {
            long retentionLease = retention == null ? 0 : retentionLeases.leaseFor(retention);
            PutOption kept = retention == null
                    ? PutOption.DEFAULT
                    : PutOption.builder().withLeaseId(retentionLease).build();
            TxnResponse reply;
            try {
                reply = requests.call(
                        "complete idempotency key " + id,
                        () -> client.getKVClient()
                                .txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(ours.revision())))
                                .Then(Op.put(
                                        key,
                                        IdempotencyValues.completed(token, ours.fingerprint(), result, failure),
                                        kept))
                                .Else(Op.get(key, GetOption.DEFAULT))
                                .commit());
            } catch (EtcdRefusedException e) {
                if (e.isLeaseGone() && retention != null && attempt < 2) {
                    retentionLeases.forget(retentionLease); // revoked from outside: take a new one
                    continue;
                }
                throw e;
            }
            boolean completed = reply.isSucceeded()
                    || decodedFirst(reply.getGetResponses().get(0))
                            .filter(stored -> stored.completedBy(token))
                            .isPresent();
            settled(id, token, ours);
            return completed;
        }
    }

    @Override
    public boolean release(String id, String token) {
        ensureOpen.run();
        ByteSequence key = keys.idempotencyKey(id);
        Claim known = claims.get(claimOf(id, token));
        Optional<Claim> owned = known != null ? Optional.of(known) : claimIn(read(key, id), token);
        if (owned.isEmpty()) {
            return false;
        }
        Claim claim = owned.get();
        TxnResponse reply = requests.call(
                "release idempotency key " + id,
                () -> client.getKVClient()
                        .txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(claim.revision())))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit());
        boolean released = reply.isSucceeded();
        if (!released
                && decodedFirst(reply.getGetResponses().get(0))
                        .filter(s -> s.record().token().equals(token))
                        .isEmpty()) {
            // the key is gone or another's: if the claim's lease is still alive, only our own delete
            // (an earlier send of this request) can have removed our record
            released = requests.call(
                                    "check the lease of idempotency key " + id,
                                    () -> client.getLeaseClient().timeToLive(claim.leaseId(), LeaseOption.DEFAULT))
                            .getTTL()
                    > 0;
        }
        settled(id, token, claim);
        return released;
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        ensureOpen.run();
        ByteSequence key = keys.idempotencyKey(id);
        GetResponse reply = read(key, id);
        return decodedFirst(reply).map(IdempotencyValues.Stored::record);
    }

    /**
     * Watches the record's key, and once the watch is in place reads the record: unless it is gone
     * or completed, waits for the next write of the key ({@link KeyWatch}). A completion, release or
     * expiry after the read is seen by the watch.
     */
    @Override
    public void awaitChange(String id, Duration atMost) throws InterruptedException {
        ensureOpen.run();
        ByteSequence key = keys.idempotencyKey(id);
        KeyWatch.await(
                client.getWatchClient(),
                key,
                false,
                watchedFrom -> {
                    try {
                        return decodedFirst(read(key, id))
                                .filter(stored -> !stored.record().completed())
                                .isPresent();
                    } catch (EngineUnavailableException e) {
                        return false; // the caller's next request reports the outage
                    }
                },
                atMost);
    }

    @Override
    public int maxResultBytes() {
        return IdempotencyValues.MAX_RESULT_BYTES;
    }

    @Override
    public Optional<Duration> maxRetention() {
        return Optional.of(RetentionLeases.MAX_RETENTION);
    }

    @Override
    public boolean notifiesChanges() {
        return true;
    }

    private GetResponse read(ByteSequence key, String id) {
        return requests.call(
                "read idempotency key " + id, () -> client.getKVClient().get(key));
    }

    /** @return the claim of this token, if the reply holds its IN_PROGRESS record */
    private static Optional<Claim> claimIn(GetResponse reply, String token) {
        return decodedFirst(reply)
                .filter(stored -> stored.inProgressOf(token))
                .map(stored -> new Claim(
                        stored.claimLease(),
                        reply.getKvs().get(0).getModRevision(),
                        stored.record().fingerprint(),
                        System.nanoTime(),
                        0));
    }

    private static Optional<IdempotencyValues.Stored> decodedFirst(GetResponse reply) {
        return reply.getKvs().isEmpty()
                ? Optional.empty()
                : Optional.of(IdempotencyValues.decode(reply.getKvs().get(0).getValue()));
    }

    /**
     * Remembers a claim of this store, to spare complete and release a read. Claims never settled
     * (a caller that gave up) are dropped once their lease is surely over and the map is full.
     */
    private void remember(String id, String token, Claim claim) {
        if (claims.size() >= MAX_REMEMBERED) {
            long now = System.nanoTime();
            claims.values().removeIf(old -> old.surelyOver(now));
            if (claims.size() >= MAX_REMEMBERED) {
                claims.clear();
            }
        }
        claims.put(claimOf(id, token), claim);
    }

    /** Forgets a claim that completed, was released or was lost, and revokes its now useless lease. */
    private void settled(String id, String token, Claim claim) {
        claims.remove(claimOf(id, token), claim);
        revokeLater(claim.leaseId());
    }

    /** Revokes a lease without waiting; if that fails, the lease ends by itself after its TTL. */
    private void revokeLater(long leaseId) {
        client.getLeaseClient().revoke(leaseId).whenComplete((reply, failure) -> {
            if (failure != null && !String.valueOf(failure.getMessage()).contains("lease not found")) {
                LOG.log(
                        Level.DEBUG,
                        "could not revoke etcd lease {0}; it ends after its TTL: {1}",
                        Long.toHexString(leaseId),
                        failure.getMessage());
            }
        });
    }
}
