package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.HandsOver;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.ReleasesByForce;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.support.Durations;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

/**
 * A lock engine on one Redis server ({@code redis://}, {@code rediss://}).
 *
 * <p><b>Layout.</b> Each lock has a few keys with one hash tag ({@link LockKeys}): an owner hash for the
 * exclusive, fair or write hold ({@code PEXPIRE} = the lease), a sorted set of readers by expiry, and a FIFO
 * queue of waiters; none is left once the lock is free. Every change is one Lua script, atomic on the server,
 * on the server's clock ({@code TIME}) only; the scripts purge expired readers and waiters. A namespace's
 * epoch ({@link KeepsEpochs}) is one more key ({@link LockKeys#epochKey}), kept for ever.
 *
 * <p><b>Invariants.</b> At most one owner hash per name, and only while no live reader exists. Release and
 * renewal check the token. Fences come from a counter the namespace's locks share (one per slot on a
 * Cluster), incremented by the granting script; a missing counter starts at the server's clock in
 * microseconds, so tokens grow across a flushed or restarted server. A retried acquire returns the same fence.
 *
 * <p><b>Fair and read-write.</b> Busy fair, write and read attempts queue by arrival, granted when no incompatible
 * waiter is ahead (readers never pass a queued writer); a waiter not refreshed within {@link #STALE_WAITER} is dropped.
 *
 * <p><b>Waiting.</b> A busy answer carries the shortest remaining lease in the way (at most {@link #RETRY_CAP})
 * and marks the hold as waited for; the release of such a hold publishes the waiters that may now be granted on
 * the lock's channel, and {@link LockWaiters} wakes only those, threads or callbacks. <b>Eviction:</b> a server
 * that may evict keys is refused unless accepted, and checked at each health check ({@link EvictionCheck}).
 *
 * <p><b>Round trips.</b> acquire 1 (first use: 2), release 1 (batched when they pile up: {@link ScriptBatches});
 * {@link #handOver} 1; renewals: a script per {@link #RENEW_BATCH} holds; a waiter: a subscribe, an acquire per wake-up.
 */
final class RedisEngine
        implements LockEngine,
                RenewsInBatches,
                Inspects,
                KeepsIdempotencyRecords,
                HandsOver,
                NotifiesChanges,
                ReleasesByForce,
                KeepsEpochs {
    private static final System.Logger LOG = System.getLogger(RedisEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(
            Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.MULTI_PROCESS, Capability.INSPECT);
    /** Longest a waiter waits without trying again, so an expiry or a lost message is noticed. */
    static final Duration RETRY_CAP = Duration.ofSeconds(2);
    /** A queued waiter that has not retried for this long is dropped from the queue. */
    static final Duration STALE_WAITER = Duration.ofSeconds(10);
    /** Pause between tries of a release while disconnected. */
    private static final Duration RECONNECT_PAUSE = Duration.ofMillis(50);
    /** How long a release waits on the caller's thread for a connection being re-established. */
    private static final Duration RELEASE_IN_CALLER = Duration.ofMillis(500);
    /** Finishes releases and withdrawals that wait for a reconnect, off the callers' threads. */
    private static final Executor BACKGROUND = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "cerberus-redis-withdraw");
        thread.setDaemon(true);
        return thread;
    });
    /** The waiter count of {@link LockInfo} when the engine cannot tell it. */
    static final int WAITERS_UNKNOWN = -1;
    /** Holds renewed by one script call. */
    static final int RENEW_BATCH = 200;
    /** How long a grant waits for its replicas when {@code waitReplicas} is set without {@code waitTimeout}. */
    static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofMillis(100);

    private final String shown;
    private final RedisLink link;
    /** Whether the link is a Redis Cluster, whose token counters are one per slot ({@link LockKeys#all}). */
    private final boolean cluster;

    private final RedisClusterAsyncCommands<String, String> commands;
    /** Acquire and release script calls, batched when they pile up. */
    private final ScriptBatches scripts;

    private final Duration timeout;
    private final LockWaiters waiters;
    private final int waitReplicas;
    private final Duration waitTimeout;
    private final EvictionCheck eviction;

    /**
     * @param shown the redacted URI
     * @param link the command connection
     * @param timeout the bound of every command
     * @param waiters the pub/sub side
     * @param waitReplicas replicas that must acknowledge a grant, 0 for none
     * @param waitTimeout how long to wait for them
     * @param eviction judges the servers' eviction policy again at each health check
     */
    RedisEngine(
            String shown,
            RedisLink link,
            Duration timeout,
            LockWaiters waiters,
            int waitReplicas,
            Duration waitTimeout,
            EvictionCheck eviction) {
        this.shown = shown;
        this.link = link;
        this.cluster = link instanceof RedisLink.Cluster;
        this.commands = link.commands();
        this.scripts = new ScriptBatches(commands, !cluster);
        this.timeout = timeout;
        this.waiters = waiters;
        this.waitReplicas = waitReplicas;
        this.waitTimeout = waitTimeout;
        this.eviction = eviction;
    }

    @Override
    public String describe() {
        return shown;
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        LockKeys keys = LockKeys.of(attempt.key());
        Object subscribedBefore = waiters.confirmedSubscription(keys.channel());
        CompletableFuture<List<?>> reply = scripts.run(
                LockScripts.ACQUIRE,
                keys.all(cluster),
                attempt.token(),
                attempt.mode().label(),
                millis(attempt.lease()),
                attempt.holder(),
                millis(STALE_WAITER),
                millis(RETRY_CAP));
        List<?> answer = Replies.await(reply, timeout, shown, () -> "acquire " + attempt);
        long value = ((Number) answer.get(1)).longValue();
        if (((Number) answer.get(0)).longValue() == 1) {
            waiters.leave(attempt.token(), true);
            if (waitReplicas > 0) {
                awaitReplicas(attempt, keys);
            }
            return AcquireResult.granted(value);
        }
        Replies.await(
                waiters.join(attempt, keys.channel(), subscribedBefore),
                timeout,
                shown,
                "subscribe to the releases of lock '" + attempt.key().name() + "'");
        return AcquireResult.busy(Duration.ofMillis(Math.max(0, value)));
    }

    /**
     * Waits until enough replicas have the grant; if they do not in time, releases it and fails,
     * since a failover now could hand the lock to someone else.
     */
    private void awaitReplicas(Acquisition attempt, LockKeys keys) {
        long acknowledged;
        try {
            acknowledged = Replies.await(
                    link.waitForReplicas(keys.owner(), waitReplicas, waitTimeout),
                    waitTimeout.plus(timeout),
                    shown,
                    "wait for " + waitReplicas + " replica(s) to have " + attempt);
        } catch (EngineUnavailableException e) {
            releaseAfterFailedWait(attempt);
            throw e;
        }
        if (acknowledged < waitReplicas) {
            releaseAfterFailedWait(attempt);
            throw new EngineUnavailableException(
                    "redis engine " + shown + " granted lock '" + attempt.key().name() + "' but only "
                            + acknowledged + " of the " + waitReplicas
                            + " replica(s) asked for (waitReplicas) acknowledged it within "
                            + Durations.format(waitTimeout)
                            + "; the grant was released again, since a failover now could lose it."
                            + " Check the replicas (INFO replication), or lower waitReplicas",
                    null);
        }
    }

    private void releaseAfterFailedWait(Acquisition attempt) {
        try {
            release(attempt);
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "could not release " + attempt + " after its replicas did not acknowledge it; it expires with"
                            + " its lease",
                    e);
        }
    }

    /** One {@code GET} of the namespace's epoch key. */
    @Override
    public long epoch(String namespace) {
        String stored = Replies.await(
                commands.get(LockKeys.epochKey(namespace)),
                timeout,
                shown,
                () -> "read the epoch of namespace '" + namespace + "'");
        return stored == null ? 0 : Long.parseLong(stored);
    }

    /**
     * One script ({@code raise_epoch.lua}: {@code GET}, compare, {@code SET}), then, with {@code waitReplicas}, a
     * {@code WAIT} as after a grant: a raise the replicas do not acknowledge in time fails, and the core raises again
     * before the next fence. Without {@code waitReplicas}, a failover to a replica the raise had not reached yet
     * loses it, as it may lose grants: the epoch falls back to the replica's, and a fence made after the failover
     * may be older than one made before it.
     */
    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        if (atLeast < 1) {
            throw new IllegalArgumentException("the epoch wanted must be positive, was " + atLeast);
        }
        String key = LockKeys.epochKey(namespace);
        CompletableFuture<String> reply =
                LockScripts.RAISE_EPOCH.run(commands, new String[] {key}, Long.toString(atLeast));
        long epoch = Long.parseLong(Replies.await(
                reply, timeout, shown, () -> "raise the epoch of namespace '" + namespace + "' to " + atLeast));
        if (waitReplicas > 0) {
            long acknowledged = Replies.await(
                    link.waitForReplicas(key, waitReplicas, waitTimeout),
                    waitTimeout.plus(timeout),
                    shown,
                    "wait for " + waitReplicas + " replica(s) to have the epoch of namespace '" + namespace + "'");
            if (acknowledged < waitReplicas) {
                throw new EngineUnavailableException(
                        "redis engine " + shown + " raised the epoch of namespace '" + namespace + "' to " + epoch
                                + " but only " + acknowledged + " of the " + waitReplicas
                                + " replica(s) asked for (waitReplicas) acknowledged it within "
                                + Durations.format(waitTimeout)
                                + "; a failover now could lose it, so it is not used (the next fence raises it again)."
                                + " Check the replicas (INFO replication), or lower waitReplicas",
                        null);
            }
        }
        return epoch;
    }

    /** Exclusive waiters race in the server, each told of a release by a message: line them up here. */
    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        waiters.await(attempt, max);
    }

    /** An async waiter is woken by the same messages as {@link #awaitChange}, through a callback. */
    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        return waiters.onChange(attempt, wake);
    }

    /**
     * Withdraws an attempt; when the connection is being re-established, the withdrawal is
     * finished in the background (within the command timeout, as a release is) so the caller,
     * whose acquire failed, moves on at once: to another engine after a switch, or to its retry.
     */
    @Override
    public void abandon(Acquisition attempt) {
        waiters.leave(attempt.token(), false);
        boolean released;
        try {
            released = release(attempt, Duration.ZERO);
        } catch (EngineUnavailableException e) {
            if (!Replies.disconnected(e)) {
                throw e;
            }
            return; // goes on in the background
        }
        if (released) {
            LOG.log(Level.DEBUG, () -> "released " + attempt + ", granted after it was given up");
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        return renewAll(List.of(attempt)).isEmpty();
    }

    @Override
    public Set<Acquisition> renewAll(Collection<Acquisition> attempts) {
        // one script may only touch keys of one Cluster slot: group the holds (one group elsewhere)
        Map<Integer, List<Acquisition>> groups = new LinkedHashMap<>();
        Duration shortestLease = timeout.multipliedBy(2);
        for (Acquisition attempt : attempts) {
            groups.computeIfAbsent(link.group(LockKeys.of(attempt.key()).owner()), slot -> new ArrayList<>())
                    .add(attempt);
            if (attempt.lease().compareTo(shortestLease) < 0) {
                shortestLease = attempt.lease();
            }
        }
        List<List<Acquisition>> batches = new ArrayList<>();
        List<CompletableFuture<List<?>>> replies = new ArrayList<>();
        for (List<Acquisition> group : groups.values()) {
            for (int from = 0; from < group.size(); from += RENEW_BATCH) {
                List<Acquisition> batch = group.subList(from, Math.min(group.size(), from + RENEW_BATCH));
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
                batches.add(batch);
                replies.add(LockScripts.RENEW.run(commands, keys, args));
            }
        }
        // a renewal answered after half the lease is of little use: fail early, the core retries
        Duration bound = shortestLease.dividedBy(2).compareTo(timeout) < 0 ? shortestLease.dividedBy(2) : timeout;
        Set<Acquisition> lost = new HashSet<>();
        for (int b = 0; b < replies.size(); b++) {
            List<?> renewed = Replies.await(replies.get(b), bound, shown, "renew " + attempts.size() + " lock(s)");
            for (int i = 0; i < renewed.size(); i++) {
                if (((Number) renewed.get(i)).longValue() == 0) {
                    lost.add(batches.get(b).get(i));
                }
            }
        }
        return lost;
    }

    /**
     * Releases; while the connection is being re-established (a restart, a failover), tries again
     * for up to {@link #RELEASE_IN_CALLER} on the caller's thread, then goes on trying in the
     * background within the command timeout (a release is token-checked and safe to repeat, and a
     * hold left behind would block others until its lease ends) and tells the caller the release
     * is not confirmed: a holder whose server died moves on at once, to its next lock on whichever
     * engine is current.
     */
    @Override
    public boolean release(Acquisition attempt) {
        return release(attempt, RELEASE_IN_CALLER);
    }

    /**
     * Releases, trying again while the connection is re-established: on this thread for
     * {@code inCaller}, then in the background until the command timeout ends.
     *
     * @throws EngineUnavailableException if the release is not confirmed by then (it may go on in
     *     the background)
     */
    private boolean release(Acquisition attempt, Duration inCaller) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        try {
            return releaseRetrying(attempt, start + Math.min(timeout.toNanos(), inCaller.toNanos()), deadline);
        } catch (EngineUnavailableException e) {
            if (Replies.disconnected(e) && System.nanoTime() + RECONNECT_PAUSE.toNanos() - deadline <= 0) {
                BACKGROUND.execute(() -> {
                    try {
                        releaseRetrying(attempt, deadline, deadline);
                    } catch (RuntimeException late) {
                        LOG.log(
                                Level.DEBUG,
                                () -> "could not release " + attempt + " (the server frees it when its lease ends): "
                                        + late.getMessage());
                    }
                });
            }
            throw e;
        }
    }

    /** Releases, trying again while the connection is re-established, until {@code tryUntil} (nanoTime). */
    private boolean releaseRetrying(Acquisition attempt, long tryUntil, long deadline) {
        while (true) {
            try {
                return releaseOnce(attempt, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (EngineUnavailableException e) {
                if (!Replies.disconnected(e) || System.nanoTime() + RECONNECT_PAUSE.toNanos() - tryUntil > 0) {
                    throw e;
                }
                LockSupport.parkNanos(RECONNECT_PAUSE.toNanos());
            }
        }
    }

    private boolean releaseOnce(Acquisition attempt, Duration within) {
        LockKeys keys = LockKeys.of(attempt.key());
        CompletableFuture<Long> reply = scripts.run(
                LockScripts.RELEASE,
                keys.all(cluster),
                attempt.token(),
                attempt.mode().label(),
                keys.channel());
        return Replies.await(reply, within, shown, () -> "release " + attempt) == 1L;
    }

    /**
     * Hands locks over unless grants must wait for replicas ({@code waitReplicas}): a hand-off
     * would grant without that wait.
     */
    @Override
    public <A> Optional<A> ability(Class<A> ability) {
        return ability == HandsOver.class && waitReplicas > 0 ? Optional.empty() : LockEngine.super.ability(ability);
    }

    /**
     * One script: the holder's hold becomes {@code next}'s, with a new fence and {@code next}'s
     * lease, as an exclusive acquire would make it, and no message is published (the lock is not
     * free). Where others queue in the store (fair, read or write attempts on the same name) or
     * readers hold, it only releases.
     */
    @Override
    public HandOff handOver(Acquisition holder, Acquisition next) {
        LockKeys keys = LockKeys.of(holder.key());
        CompletableFuture<List<?>> reply = LockScripts.HAND_OVER.run(
                commands, keys.all(cluster), holder.token(), next.token(), millis(next.lease()), next.holder());
        List<?> answer = Replies.await(reply, timeout, shown, () -> "hand " + holder + " over to " + next);
        long outcome = ((Number) answer.get(0)).longValue();
        if (outcome == 2) {
            waiters.leave(next.token(), true);
            return HandOff.handed(((Number) answer.get(1)).longValue());
        }
        return HandOff.notHanded(outcome != 0 && release(holder));
    }

    /**
     * One script on the lock's slot: frees the hold only if its fence is still the token, and
     * publishes the release; the old holder's next renewal finds another token, or none.
     */
    @Override
    public boolean forceRelease(LockKey key, long fencingToken) {
        LockKeys keys = LockKeys.of(key);
        CompletableFuture<Long> reply =
                LockScripts.FORCE_RELEASE.run(commands, keys.all(cluster), Long.toString(fencingToken), keys.channel());
        return Replies.await(reply, timeout, shown, () -> "force the release of lock '" + key.name() + "'") == 1L;
    }

    @Override
    public boolean isLocked(LockKey key) {
        LockKeys keys = LockKeys.of(key);
        CompletableFuture<Long> reply =
                LockScripts.IS_LOCKED.run(commands, new String[] {keys.owner(), keys.readers()});
        return Replies.await(reply, timeout, shown, "check lock '" + key.name() + "'") == 1L;
    }

    /**
     * Reads the probe, then the eviction policy of every server that stores keys (one {@code INFO}
     * each, all at once): a failover or a {@code CONFIG SET} may have changed it since the engine
     * opened.
     */
    @Override
    public List<String> checkHealth(LockKey probe) {
        isLocked(probe);
        return eviction.atHealthCheck(link.evictionPolicies(timeout));
    }

    /**
     * Lists the holds with {@code SCAN} (never {@code KEYS}) and one script per lock. The number
     * of waiters is unknown (-1): exclusive attempts never queue in the server, and they may wait
     * for the same name as queued fair, read or write attempts, so no count the server keeps is
     * complete.
     */
    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        ScanArgs scan = ScanArgs.Builder.matches(LockKeys.scanPattern(namespace, prefix))
                .limit(1000);
        Set<String> names = new LinkedHashSet<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = Replies.await(
                    commands.scan(cursor, scan), timeout, shown, "list the locks of namespace '" + namespace + "'");
            for (String key : page.getKeys()) {
                LockKeys.lockNameOfHoldKey(key)
                        .filter(name -> name.startsWith(prefix))
                        .ifPresent(names::add);
            }
            cursor = page;
        } while (!cursor.isFinished());
        return holdsOf(namespace, new ArrayList<>(names));
    }

    /** One lock's holds, read from its own keys: no scan of the key space. */
    @Override
    public List<LockInfo> inspectLock(String namespace, String name) {
        return holdsOf(namespace, List.of(name));
    }

    private List<LockInfo> holdsOf(String namespace, List<String> ordered) {
        List<CompletableFuture<List<?>>> replies = new ArrayList<>();
        for (String name : ordered) {
            LockKeys keys = LockKeys.of(new LockKey(namespace, name));
            replies.add(
                    LockScripts.INSPECT.run(commands, new String[] {keys.owner(), keys.readers(), keys.readerInfo()}));
        }
        List<LockInfo> infos = new ArrayList<>();
        for (int i = 0; i < ordered.size(); i++) {
            List<?> reply = Replies.await(replies.get(i), timeout, shown, "inspect lock '" + ordered.get(i) + "'");
            List<?> hold = (List<?>) reply.get(0);
            if (!hold.isEmpty()) {
                infos.add(new LockInfo(
                        ordered.get(i),
                        String.valueOf(hold.get(0)),
                        String.valueOf(hold.get(1)),
                        Long.parseLong(String.valueOf(hold.get(2))),
                        remaining(hold.get(3)),
                        WAITERS_UNKNOWN));
            }
            List<?> readers = (List<?>) reply.get(1);
            for (int r = 0; r + 2 < readers.size(); r += 3) {
                infos.add(new LockInfo(
                        ordered.get(i),
                        "read",
                        String.valueOf(readers.get(r)),
                        Long.parseLong(String.valueOf(readers.get(r + 1))),
                        remaining(readers.get(r + 2)),
                        WAITERS_UNKNOWN));
            }
        }
        return infos;
    }

    private static Optional<Duration> remaining(Object millis) {
        return Optional.of(Duration.ofMillis(Math.max(0, ((Number) millis).longValue())));
    }

    private static String millis(Duration duration) {
        return Long.toString(Math.max(1, duration.toMillis()));
    }

    /** @return the waiters, for tests */
    LockWaiters waiters() {
        return waiters;
    }

    @Override
    public void close() {
        try {
            waiters.close();
        } finally {
            link.close();
        }
    }

    @Override
    public String toString() {
        return "RedisEngine[" + shown + "]";
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return new RedisIdempotencyStore(link, timeout, shown, waiters, waitReplicas, waitTimeout);
    }
}
