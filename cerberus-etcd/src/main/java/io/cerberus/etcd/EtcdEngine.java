package io.cerberus.etcd;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LossReporter;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.ReleasesByForce;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.support.FailureEpisode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The {@code etcd://} engine.
 *
 * <p><b>Recipe.</b> An attempt is one key under the lock's directory, attached to the client's one
 * lease ({@link ClientLease}, {@link LockKeys}). Acquire is one transaction: create the key if its
 * create revision is 0, and read the directory sorted by create revision. The attempt holds when no
 * earlier key excludes it (any for a writer, a writer for a reader); otherwise it watches only the
 * key it waits on ({@link KeyWatch}; async: {@link KeyChangeWatch}): waiters queue in arrival order, a release
 * wakes one. Exclusive waiters line up in the core first ({@link LinesUpLocally}): a client queues at most one per name.
 *
 * <p><b>Invariants.</b> Fencing token = the create revision of the holder's key: revisions only
 * grow, and holders follow the create order. Every request is safe to resend ({@link EtcdRequests}):
 * the create is keyed by lease and the attempt's number on the lock ({@link KeySlots}) and writes
 * its token; abandon and expiry delete only a key whose create revision (or, for an unanswered
 * create, value) is still ours; a release's number is reused only when exactly one copy of it went
 * out and was answered ({@link DeleteCopyCounter}), so no stale delete reaches a newer key; a key an
 * earlier attempt left on the number is deleted, never adopted, so no token is handed out twice.
 * Holds end on the server with the client's lease (a crash, a revoke); a hold's own lease is
 * enforced here, by deleting the key when it runs out unrenewed. A lost client lease reports every
 * hold on it to the {@link LossReporter}. A namespace's epoch ({@link KeepsEpochs}) is one more key,
 * on no lease ({@link LockKeys#epochKey}), raised by a compare-and-swap on its mod revision.
 *
 * <p><b>Costs.</b> Acquire uncontended: one transaction. Release: one delete. Renew: one read (one transaction for
 * up to 100 holds; more, a listing of the lease's keys). Waiting: one watch per wake-up; a keep-alive every TTL/3.
 */
final class EtcdEngine
        implements LockEngine,
                LinesUpLocally,
                RenewsInBatches,
                Inspects,
                KeepsIdempotencyRecords,
                NotifiesChanges,
                ReleasesByForce,
                KeepsEpochs {
    private static final System.Logger LOG = System.getLogger(EtcdEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(
            Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.MULTI_PROCESS, Capability.INSPECT);
    private static final GetOption BY_CREATE_REVISION = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .build();
    /** An exclusive attempt that has just created its key needs only the order of the keys, not their values. */
    private static final GetOption KEYS_BY_CREATE_REVISION = GetOption.builder()
            .isPrefix(true)
            .withKeysOnly(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .build();
    /** A renewal, and a waiter's look at the key it waits on, only compare create revisions: the values stay on the server. */
    private static final GetOption KEY_ONLY =
            GetOption.builder().withKeysOnly(true).build();
    /** A release learns from the deleted key whether it was the hold's. */
    private static final DeleteOption WITH_PREVIOUS =
            DeleteOption.builder().withPrevKV(true).build();
    /** Renewing more holds than one transaction reads asks the lease for its keys instead (one round trip). */
    private static final LeaseOption WITH_KEYS =
            LeaseOption.builder().withAttachedKeys().build();

    private static final int RENEW_READS_PER_TXN = 100;
    /** A quarter of gRPC's default limit on a reply, so a lease's key list never comes near it. */
    private static final long MAX_KEYS_REPLY_BYTES = 1 << 20;

    private final String describe;
    private final Client client;
    private final DeleteCopyCounter deleteCopyCounter;
    private final EtcdRequests requests;
    private final LockKeys keys;
    private final LossReporter lossReporter;
    private final ClientLease lease;
    private final ScheduledExecutorService expiries;
    private final ExpirySweep expirySweep;
    private final ScheduledExecutorService keepAlives;
    private final Map<String, AttemptState> attempts = new ConcurrentHashMap<>();
    /** The watches of async waiters, until called or cancelled. */
    private final Set<KeyChangeWatch> changeWatches = ConcurrentHashMap.newKeySet();
    /** Failures to delete an abandoned attempt's key: logged once per episode, not once per attempt. */
    private final FailureEpisode abandons;
    /** The keys whose delete failed, deleted again until the server answers. */
    private final LeftBehind leftBehind;

    private final KeySlots slots = new KeySlots();
    private final EtcdIdempotencyStore idempotency;
    private volatile boolean closed;

    /**
     * @param deleteCopyCounter the interceptor installed on {@code client}, counting the copies of each
     *     release's delete
     */
    EtcdEngine(
            String describe,
            Client client,
            DeleteCopyCounter deleteCopyCounter,
            EtcdTarget target,
            Duration timeout,
            LossReporter lossReporter) {
        this.describe = describe;
        this.abandons = new FailureEpisode(LOG, "delete the keys of abandoned attempts on " + describe);
        this.client = client;
        this.deleteCopyCounter = deleteCopyCounter;
        this.requests = new EtcdRequests(describe, timeout);
        this.keys = new LockKeys(target.prefix());
        this.lossReporter = lossReporter;
        this.lease = new ClientLease(client.getLeaseClient(), requests, target.ttl(), this::leaseLost);
        this.expiries = Executors.newSingleThreadScheduledExecutor(daemon("cerberus-etcd-expiry"));
        this.expirySweep = new ExpirySweep(expiries, attempts::values, this::expire);
        // two threads: the watch of the lease's deadline must not wait behind a keep-alive that hangs
        this.keepAlives = Executors.newScheduledThreadPool(2, daemon("cerberus-etcd-keepalive"));
        this.idempotency = new EtcdIdempotencyStore(client, requests, keys, this::ensureOpen);
        this.leftBehind = new LeftBehind(
                state -> deleteIfOurs(state, "delete again the key of " + state.attempt),
                state -> slots.free(state.attempt.key(), state.slot),
                timeout.multipliedBy(2));
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Grants the client lease (checking that etcd answers) and starts keeping it alive. */
    void start() {
        lease.current();
        lease.keepAliveOn(keepAlives);
    }

    @Override
    public String describe() {
        return describe;
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /** A silent client's keys go with its client lease: the TTL the server granted, whatever the hold's lease. */
    @Override
    public Optional<Duration> silentHolderExpiry(Duration lease) {
        return Optional.of(this.lease.grantedTtl());
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        ensureOpen();
        long leaseId = lease.current();
        AttemptState state = attempts.compute(
                attempt.token(),
                (token, known) ->
                        known != null && known.leaseId == leaseId ? known : newState(attempt, leaseId, known));
        ByteSequence directory = keys.lockDirectory(attempt.key());
        // a reader needs the modes of the keys before its own; a key found existing is checked for the attempt's token
        GetOption created = attempt.mode().isShared() ? BY_CREATE_REVISION : KEYS_BY_CREATE_REVISION;
        // a key left on this attempt's number by an earlier attempt is deleted, and the create tried once more
        for (int tries = 0; ; tries++) {
            TxnResponse reply;
            try {
                reply = requests.call(
                        "acquire lock '" + attempt.key().name() + "'",
                        () -> client.getKVClient()
                                .txn()
                                .If(new Cmp(state.key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(
                                        Op.put(
                                                state.key,
                                                LockKeys.value(attempt),
                                                PutOption.builder()
                                                        .withLeaseId(leaseId)
                                                        .build()),
                                        Op.get(directory, created))
                                .Else(Op.get(directory, BY_CREATE_REVISION))
                                .commit());
            } catch (EtcdRefusedException e) {
                if (e.isLeaseGone()) {
                    lease.lost(leaseId, "its etcd lease " + Long.toHexString(leaseId) + " expired or was revoked");
                    return AcquireResult.busy(Duration.ZERO);
                }
                throw e;
            }
            List<KeyValue> lockKeys = reply.getGetResponses().get(0).getKvs();
            int mine = indexOf(lockKeys, state.key);
            if (mine < 0) {
                // our key went between create and read: the lease ended; the next try starts afresh
                forget(state);
                return AcquireResult.busy(Duration.ZERO);
            }
            KeyValue ours = lockKeys.get(mine);
            if (!reply.isSucceeded() && !LockKeys.tokenOf(ours.getValue()).equals(attempt.token())) {
                // an earlier attempt's key: its delete failed, or a late resend of its create came after it
                deleteIfCreatedAt(
                        state.key,
                        ours.getCreateRevision(),
                        "remove a stale key of lock '" + attempt.key().name() + "'");
                if (tries == 0) {
                    continue;
                }
                return AcquireResult.busy(Duration.ZERO);
            }
            state.createRevision = ours.getCreateRevision();
            int blocker = blockerOf(lockKeys, mine, attempt.mode().isShared());
            if (blocker < 0) {
                state.granted = true;
                if (attempts.get(attempt.token()) != state || !lease.isLive(leaseId)) {
                    // the client lease was declared lost while the create was on its way: no hold, and the key goes
                    // now rather than when the server ends the lease
                    dropLate(state);
                    return AcquireResult.busy(Duration.ZERO);
                }
                expirySweep.startLease(state);
                return AcquireResult.granted(state.createRevision);
            }
            state.predecessor = lockKeys.get(blocker).getKey();
            state.predecessorCreateRevision = lockKeys.get(blocker).getCreateRevision();
            state.readRevision = reply.getHeader().getRevision();
            // a holder's expiry deletes its key and wakes the watch, so the bound is only a safety net
            return AcquireResult.busy(lease.ttl());
        }
    }

    /** A new state for an attempt; one made again under a new lease keeps its number. */
    private AttemptState newState(Acquisition attempt, long leaseId, AttemptState earlier) {
        int slot = earlier != null ? earlier.slot : slots.take(attempt.key(), leaseId);
        return new AttemptState(attempt, keys.attemptKey(attempt.key(), leaseId, slot), leaseId, slot);
    }

    /** Deletes the key of a grant that came after its lease was declared lost (best effort: the key goes with the lease). */
    private void dropLate(AttemptState state) {
        String what = "remove the key of lock '" + state.attempt.key().name() + "' created on a lost lease";
        try {
            if (attempts.remove(state.attempt.token(), state)) {
                deleteAndFree(state, what);
            } else {
                deleteIfOurs(state, what);
            }
        } catch (RuntimeException e) {
            LOG.log(
                    Level.DEBUG,
                    "could not " + what + "; it is deleted again every second (or goes with the lease)",
                    e);
        }
    }

    /** Drops a state whose key is gone (or goes with its lease), giving its number back, if it is still the attempt's. */
    private boolean forget(AttemptState state) {
        if (attempts.remove(state.attempt.token(), state)) {
            slots.free(state.attempt.key(), state.slot);
            return true;
        }
        return false;
    }

    /**
     * Deletes the key of a state already dropped, then gives its number back: not before, or
     * another attempt given the number would find the key still there, take it for one left
     * behind, and delete it under this delete.
     */
    private boolean deleteAndFree(AttemptState state, String what) {
        boolean deleted;
        try {
            deleted = deleteIfOurs(state, what);
        } catch (RuntimeException e) {
            leftBehind.add(state); // deleted again every second; its number is given back once it is gone
            throw e;
        }
        slots.free(state.attempt.key(), state.slot);
        return deleted;
    }

    private static int indexOf(List<KeyValue> lockKeys, ByteSequence key) {
        for (int i = 0; i < lockKeys.size(); i++) {
            if (lockKeys.get(i).getKey().equals(key)) {
                return i;
            }
        }
        return -1;
    }

    /** @return the key an attempt at {@code mine} waits on, or -1 if it holds */
    private static int blockerOf(List<KeyValue> lockKeys, int mine, boolean shared) {
        if (!shared) {
            return mine - 1;
        }
        for (int i = mine - 1; i >= 0; i--) {
            if (!LockKeys.modeOf(lockKeys.get(i).getValue()).isShared()) {
                return i;
            }
        }
        return -1;
    }

    private void expire(AttemptState state) {
        if (attempts.remove(state.attempt.token(), state)) {
            try {
                deleteAndFree(
                        state, "end the lease of lock '" + state.attempt.key().name() + "'");
            } catch (RuntimeException e) {
                LOG.log(
                        Level.WARNING,
                        "could not delete the key of " + state.attempt + " at the end of its lease; it is deleted"
                                + " again every second until etcd answers",
                        e);
            }
        }
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        AttemptState state = attempts.get(attempt.token());
        if (state == null || state.granted) {
            return;
        }
        ByteSequence predecessor = state.predecessor;
        if (predecessor == null) {
            return;
        }
        long created = state.predecessorCreateRevision;
        long read = state.readRevision;
        KeyWatch.await(
                client.getWatchClient(),
                predecessor,
                true,
                watchedFrom -> watchedFrom <= read || exists(predecessor, created),
                max);
    }

    /**
     * Watches the key the attempt waits on, as {@link #awaitChange} does, with a callback instead of
     * a waiting thread ({@link KeyChangeWatch}); an attempt that waits on nothing is woken at once.
     */
    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        AttemptState state = attempts.get(attempt.token());
        ByteSequence predecessor = state == null || state.granted ? null : state.predecessor;
        if (predecessor == null || closed) {
            wake.run();
            return () -> {};
        }
        long created = state.predecessorCreateRevision;
        long read = state.readRevision;
        KeyChangeWatch watch = KeyChangeWatch.start(
                client.getWatchClient(),
                predecessor,
                watchedFrom -> watchedFrom <= read
                        ? CompletableFuture.completedFuture(true)
                        : existsLater(predecessor, created),
                expiries,
                wake,
                changeWatches::remove);
        changeWatches.add(watch);
        return watch;
    }

    /** @return how many async waiters' watches are open (for tests) */
    int changeWatches() {
        return changeWatches.size();
    }

    /** {@link #exists} without waiting for the answer; false when the server cannot tell. */
    private CompletableFuture<Boolean> existsLater(ByteSequence key, long createRevision) {
        return client.getKVClient()
                .get(key, KEY_ONLY)
                .thenApply(reply ->
                        !reply.getKvs().isEmpty() && reply.getKvs().get(0).getCreateRevision() == createRevision)
                .exceptionally(failure -> false);
    }

    /** @return whether the key is there with that create revision; false when the server cannot tell (the caller retries) */
    private boolean exists(ByteSequence key, long createRevision) {
        try {
            List<KeyValue> found = requests.call(
                            "look up the key waited on",
                            () -> client.getKVClient().get(key, KEY_ONLY))
                    .getKvs();
            return !found.isEmpty() && found.get(0).getCreateRevision() == createRevision;
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public void abandon(Acquisition attempt) {
        AttemptState state = attempts.remove(attempt.token());
        if (state == null) {
            return;
        }
        try {
            deleteAndFree(state, "give up an attempt on lock '" + attempt.key().name() + "'");
            abandons.succeeded();
        } catch (RuntimeException e) {
            abandons.failed(() -> attempt + "; its key is deleted again every second until etcd answers", e);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        return !renewAll(List.of(attempt)).contains(attempt);
    }

    @Override
    public Set<Acquisition> renewAll(java.util.Collection<Acquisition> held) {
        ensureOpen();
        Set<Acquisition> lost = new HashSet<>();
        Map<Long, List<AttemptState>> byLease = new HashMap<>();
        for (Acquisition attempt : held) {
            AttemptState state = attempts.get(attempt.token());
            if (state == null || !state.granted) {
                lost.add(attempt);
            } else {
                byLease.computeIfAbsent(state.leaseId, id -> new ArrayList<>()).add(state);
            }
        }
        byLease.forEach((leaseId, states) -> {
            Set<AttemptState> gone = states.size() > RENEW_READS_PER_TXN && attachedKeysFitOneReply(leaseId)
                    ? goneFromLease(leaseId, states)
                    : goneByReads(states);
            for (AttemptState state : states) {
                if (gone.contains(state)) {
                    forget(state);
                    lost.add(state.attempt);
                } else {
                    expirySweep.startLease(state);
                }
            }
        });
        return lost;
    }

    /** @return the holds whose key is gone or is no longer the one created, read in transactions of up to 100 reads */
    private Set<AttemptState> goneByReads(List<AttemptState> states) {
        Set<AttemptState> gone = new HashSet<>();
        for (int from = 0; from < states.size(); from += RENEW_READS_PER_TXN) {
            List<AttemptState> batch = states.subList(from, Math.min(states.size(), from + RENEW_READS_PER_TXN));
            Op[] reads = batch.stream().map(s -> Op.get(s.key, KEY_ONLY)).toArray(Op[]::new);
            List<GetResponse> replies = requests.callKeeping(
                            "renew " + reads.length + " locks",
                            () -> client.getKVClient().txn().Then(reads).commit())
                    .getGetResponses();
            for (int i = 0; i < batch.size(); i++) {
                AttemptState state = batch.get(i);
                List<KeyValue> found = replies.get(i).getKvs();
                if (found.isEmpty() || found.get(0).getCreateRevision() != state.createRevision) {
                    gone.add(state);
                }
            }
        }
        return gone;
    }

    /**
     * Renews many holds of one lease in one round trip: the lease's attached keys, as etcd's lessor
     * lists them. A key names its lease and its attempt's token, so a key still attached to the live
     * lease is the one this engine created, never a newer one.
     *
     * @return the holds whose key is no longer attached (all of them if the lease is gone)
     */
    private Set<AttemptState> goneFromLease(long leaseId, List<AttemptState> states) {
        LeaseTimeToLiveResponse reply = requests.callKeeping(
                "renew " + states.size() + " locks",
                () -> client.getLeaseClient().timeToLive(leaseId, WITH_KEYS));
        if (reply.getTTL() <= 0) {
            return new HashSet<>(states);
        }
        Set<ByteSequence> attached = new HashSet<>(reply.getKeys());
        Set<AttemptState> gone = new HashSet<>();
        for (AttemptState state : states) {
            if (!attached.contains(state.key)) {
                gone.add(state);
            }
        }
        return gone;
    }

    /** @return whether the keys on a lease fit well within gRPC's default 4 MiB limit on one reply */
    private boolean attachedKeysFitOneReply(long leaseId) {
        long bytes = 0;
        for (AttemptState state : attempts.values()) {
            if (state.leaseId == leaseId) {
                bytes += state.key.size() + 4;
            }
        }
        return bytes <= MAX_KEYS_REPLY_BYTES;
    }

    @Override
    public boolean release(Acquisition attempt) {
        ensureOpen();
        AttemptState state = attempts.remove(attempt.token());
        if (state == null) {
            return false;
        }
        if (!state.granted) {
            slots.free(attempt.key(), state.slot);
            return false;
        }
        return deleteHeld(state, "release lock '" + attempt.key().name() + "'");
    }

    /**
     * Deletes a hold's key with a plain delete, not a transaction: etcd 3.4 spends noticeably more
     * on a transaction with a compare than on a delete (docs/ETCD.md, "Release"), and a release is half of
     * every cycle. A plain delete cannot check that the key is still the hold's, but while the
     * attempt holds, its key (named by the client lease and the attempt's number) is written by
     * nobody else, and the number is given back only when the delete went out exactly once and was
     * answered ({@link DeleteCopyCounter}). A delete sent again, or left unanswered, retires the number
     * for the rest of the client lease instead, so a late copy can never delete a newer hold's key.
     *
     * @return whether the key deleted was the one the hold created
     */
    private boolean deleteHeld(AttemptState state, String what) {
        DeleteCopyCounter.Count sends = deleteCopyCounter.watch(state.key);
        boolean answered = false;
        try {
            List<KeyValue> deleted = requests.callPreferring(
                            what,
                            () -> client.getKVClient().delete(state.key, WITH_PREVIOUS),
                            reply -> !reply.getPrevKvs().isEmpty())
                    .getPrevKvs();
            answered = true;
            return !deleted.isEmpty() && deleted.get(0).getCreateRevision() == state.createRevision;
        } finally {
            deleteCopyCounter.stop(sends);
            if (answered && sends.copies() == 1) {
                slots.free(state.attempt.key(), state.slot);
            } else {
                slots.retire(state.attempt.key(), state.slot, state.leaseId);
            }
        }
    }

    /**
     * Deletes the attempt's key only if it is still the one this attempt created: same create
     * revision, or for an attempt whose create was never answered, same value (which holds its
     * token). A later attempt given the same number ({@link KeySlots}) writes another token and gets
     * another revision, so its key is never deleted here.
     */
    private boolean deleteIfOurs(AttemptState state, String what) {
        long revision = state.createRevision;
        Cmp ours = revision == 0
                ? new Cmp(state.key, Cmp.Op.EQUAL, CmpTarget.value(LockKeys.value(state.attempt)))
                : new Cmp(state.key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision));
        return deleteIf(state.key, ours, what);
    }

    /** Deletes a key only if it was created at {@code revision}. */
    private boolean deleteIfCreatedAt(ByteSequence key, long revision, String what) {
        return deleteIf(key, new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)), what);
    }

    /** A copy sent again finds the key gone when the first copy deleted it: a "deleted" answer of any copy wins. */
    private boolean deleteIf(ByteSequence key, Cmp condition, String what) {
        return requests.callPreferring(
                        what,
                        () -> client.getKVClient()
                                .txn()
                                .If(condition)
                                .Then(Op.delete(key, DeleteOption.DEFAULT))
                                .commit(),
                        TxnResponse::isSucceeded)
                .isSucceeded();
    }

    /**
     * Reads the lock's keys, and deletes the holding one whose create revision is the token in a
     * transaction that compares that revision: a key deleted and created again since (a new hold)
     * has a newer one and stays. The waiter watching the deleted key wakes, as after a release.
     */
    @Override
    public boolean forceRelease(LockKey key, long fencingToken) {
        ensureOpen();
        String what = "force the release of lock '" + key.name() + "'";
        List<KeyValue> lockKeys = requests.call(
                        what, () -> client.getKVClient().get(keys.lockDirectory(key), BY_CREATE_REVISION))
                .getKvs();
        for (KeyValue hold : lockKeys.subList(0, LockListing.holders(lockKeys))) {
            if (hold.getCreateRevision() == fencingToken) {
                return deleteIfCreatedAt(hold.getKey(), fencingToken, what);
            }
        }
        return false;
    }

    @Override
    public boolean isLocked(LockKey key) {
        ensureOpen();
        ByteSequence directory = keys.lockDirectory(key);
        return requests.call(
                                "read lock '" + key.name() + "'",
                                () -> client.getKVClient()
                                        .get(
                                                directory,
                                                GetOption.builder()
                                                        .isPrefix(true)
                                                        .withCountOnly(true)
                                                        .build()))
                        .getCount()
                > 0;
    }

    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        ensureOpen();
        ByteSequence directory = keys.namespaceDirectory(namespace);
        List<KeyValue> all = requests.call(
                        "list locks", () -> client.getKVClient().get(directory, BY_CREATE_REVISION))
                .getKvs();
        return LockListing.list(all, directory, prefix);
    }

    /** One read of the namespace's epoch key. */
    @Override
    public long epoch(String namespace) {
        ensureOpen();
        ByteSequence key = keys.epochKey(namespace);
        List<KeyValue> found = requests.call(
                        "read the epoch of namespace '" + namespace + "'",
                        () -> client.getKVClient().get(key))
                .getKvs();
        return found.isEmpty() ? 0 : epochOf(found.get(0));
    }

    /**
     * A compare-and-swap loop: a transaction puts {@code atLeast} if the key is still as last read (its mod revision,
     * or create revision 0 when absent), else reads it again, until the epoch is {@code atLeast} or more. The key is
     * on no lease: kept for ever. A resent transaction whose first copy was carried out finds the key changed, reads
     * the raised epoch, and returns it.
     */
    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        ensureOpen();
        if (atLeast < 1) {
            throw new IllegalArgumentException("the epoch wanted must be positive, was " + atLeast);
        }
        ByteSequence key = keys.epochKey(namespace);
        ByteSequence wanted = LockKeys.bytes(Long.toString(atLeast));
        String what = "raise the epoch of namespace '" + namespace + "' to " + atLeast;
        List<KeyValue> found =
                requests.call(what, () -> client.getKVClient().get(key)).getKvs();
        while (true) {
            Cmp unchanged;
            if (found.isEmpty()) {
                unchanged = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
            } else {
                long epoch = epochOf(found.get(0));
                if (epoch >= atLeast) {
                    return epoch;
                }
                unchanged = new Cmp(
                        key, Cmp.Op.EQUAL, CmpTarget.modRevision(found.get(0).getModRevision()));
            }
            TxnResponse reply = requests.call(
                    what,
                    () -> client.getKVClient()
                            .txn()
                            .If(unchanged)
                            .Then(Op.put(key, wanted, PutOption.DEFAULT))
                            .Else(Op.get(key, GetOption.DEFAULT))
                            .commit());
            if (reply.isSucceeded()) {
                return atLeast;
            }
            found = reply.getGetResponses().get(0).getKvs();
        }
    }

    private static long epochOf(KeyValue stored) {
        return Long.parseLong(stored.getValue().toString(StandardCharsets.US_ASCII));
    }

    /** Idempotency records live beside the locks, under their own branch of the prefix ({@link EtcdIdempotencyStore}). */
    @Override
    public IdempotencyStore idempotencyStore() {
        return idempotency;
    }

    private void leaseLost(long leaseId, String reason) {
        slots.dropRetired(leaseId);
        for (AttemptState state : List.copyOf(attempts.values())) {
            if (state.leaseId == leaseId && forget(state)) {
                if (state.granted) {
                    lossReporter.lost(state.attempt.token(), reason);
                }
            }
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("etcd engine " + describe + " is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        lease.stop();
        keepAlives.shutdownNow();
        expiries.shutdownNow();
        leftBehind.close();
        attempts.clear();
        lease.revoke();
        client.close();
    }
}
