package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.redis.RedlockNodes.Outcome;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.support.Durations;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A lock engine on N independent Redis masters ({@code redlock://h1,h2,h3}): Redlock as its author describes it.
 *
 * <p><b>Acquire.</b> The single-server {@code acquire.lua} (exclusive) goes to all nodes at once,
 * bounded by the node timeout. The lock is held when a majority ({@code N/2 + 1}) granted it within
 * the validity, {@code lease − drift} ({@code drift = lease × driftFactor + 2 ms}). Otherwise the
 * attempt is released on every reachable node (a silent node's grant may be on its way) and the
 * answer is busy, or unavailable when the silent nodes are down; merely slow nodes make the attempt
 * back off and retry. N independent fence counters order nothing: no fencing token.
 *
 * <p><b>Validity.</b> A hold counts from when its request was sent, less the drift ({@link #validity}):
 * {@link io.cerberus.Lease#isValid()} turns false at {@code sent + lease − drift}. <b>Renew, release</b>
 * go to every node: a renewal holds on a majority, is lost once no majority is possible, else is
 * unavailable (the core retries); a release is true when a majority still had the hold.
 *
 * <p><b>Safety.</b> Two holders would need two majorities, which share a node that grants a name to
 * one token at a time. It rests on bounded clock drift, holders that do not pause past their validity,
 * and nodes that keep keys until they expire (restart one without {@code appendfsync always} only
 * after the longest lease).
 *
 * <p><b>Waiting.</b> A busy answer that won no node says when a majority may be free (at most
 * {@link RedisEngine#RETRY_CAP}); releases publish on every node, {@link LockWaiters} wakes one waiter (a thread
 * or a callback); a split vote backs off for a random, doubling time. Inspect lists holds a majority agrees on.
 * Round trips: one per node, all at once; renewals, one per {@link RedisEngine#RENEW_BATCH} holds per node.
 */
final class RedlockEngine implements LockEngine, RenewsInBatches, Inspects, LinesUpLocally, NotifiesChanges {
    private static final System.Logger LOG = System.getLogger(RedlockEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(Capability.MULTI_PROCESS, Capability.INSPECT);
    /** The fixed part of the drift allowance, for the resolution of the nodes' clocks and timers. */
    static final Duration DRIFT_FIXED = Duration.ofMillis(2);
    /** The default drift allowance per unit of lease. */
    static final double DEFAULT_DRIFT_FACTOR = 0.01;
    /** The default node timeout is a tenth of the lease, at most this. */
    static final Duration DEFAULT_NODE_TIMEOUT_CAP = Duration.ofMillis(100);
    /** Largest random delay added to a busy answer, so competing clients do not retry in step. */
    static final Duration JITTER = Duration.ofMillis(20);

    static final String WHY_NO_FENCING =
            "Redlock has no fencing token, because its nodes are independent masters that share"
                    + " no counter: a number from one node orders nothing across a majority, and a node restarted empty would start"
                    + " over; protect the resource with an engine that has fencing tokens (such as redis://) where stale writes matter";

    private final String shown;
    private final RedlockNodes nodes;
    private final int quorum;
    private final Duration timeout;
    private final Optional<Duration> nodeTimeout;
    private final double driftFactor;
    private final LockWaiters waiters;
    private final EvictionCheck eviction;

    /**
     * @param shown the redacted URI
     * @param nodes the masters, connected or connecting
     * @param timeout bound of renewals, releases and checks
     * @param nodeTimeout bound of each node's acquire reply, or empty for the default (a tenth of
     *     the lease, at most {@link #DEFAULT_NODE_TIMEOUT_CAP})
     * @param driftFactor the drift allowance per unit of lease
     * @param connector runs the nodes' connects; shut down with the engine
     * @param eviction judges the nodes' eviction policy, at each health check
     */
    RedlockEngine(
            String shown,
            List<RedlockNode> nodes,
            Duration timeout,
            Optional<Duration> nodeTimeout,
            double driftFactor,
            ExecutorService connector,
            EvictionCheck eviction) {
        this.shown = shown;
        this.nodes = new RedlockNodes(shown, nodes, timeout, connector);
        this.quorum = this.nodes.quorum();
        this.timeout = timeout;
        this.nodeTimeout = nodeTimeout;
        this.driftFactor = driftFactor;
        this.waiters = LockWaiters.ofNodes(this.nodes.list());
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
    public Optional<String> whyNot(Capability capability) {
        return capability == Capability.FENCING ? Optional.of(WHY_NO_FENCING) : Optional.empty();
    }

    /** @return {@code lease − (lease × driftFactor + 2 ms)} */
    @Override
    public Duration validity(Duration lease) {
        return lease.minus(drift(lease));
    }

    Duration drift(Duration lease) {
        return Duration.ofNanos((long) (lease.toNanos() * driftFactor)).plus(DRIFT_FIXED);
    }

    Duration nodeTimeout(Duration lease) {
        return nodeTimeout.orElseGet(() -> {
            Duration tenth = lease.dividedBy(10);
            return tenth.compareTo(DEFAULT_NODE_TIMEOUT_CAP) < 0 ? tenth : DEFAULT_NODE_TIMEOUT_CAP;
        });
    }

    /** @return how many nodes make a majority */
    int quorum() {
        return quorum;
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        if (attempt.mode() != LockMode.EXCLUSIVE) {
            throw new IllegalArgumentException("redlock engine " + shown + " serves exclusive locks only, not "
                    + attempt.mode().label());
        }
        LockKeys keys = LockKeys.of(attempt.key());
        Object subscribedBefore = waiters.confirmedSubscription(keys.channel());
        Duration bound = nodeTimeout(attempt.lease());
        long start = System.nanoTime();
        List<Outcome<List<?>>> outcomes = nodes.ask(
                bound, commands -> RedlockRequests.acquire(commands, attempt, keys), RedlockRequests::isGrant, quorum);
        long elapsed = System.nanoTime() - start;
        int granted = 0;
        int answered = RedlockNodes.answered(outcomes);
        int slow = RedlockNodes.slow(outcomes);
        List<Long> busyMillis = new ArrayList<>();
        for (Outcome<List<?>> outcome : outcomes) {
            if (outcome.answered()) {
                List<?> reply = outcome.value();
                if (RedlockRequests.isGrant(reply)) {
                    granted++;
                } else {
                    busyMillis.add(Math.max(0, ((Number) reply.get(1)).longValue()));
                }
            }
        }
        if (granted >= quorum && elapsed < validity(attempt.lease()).toNanos()) {
            waiters.leave(attempt.token(), true);
            return AcquireResult.granted(-1);
        }
        releaseEverywhere(attempt, keys);
        if (answered + slow < quorum) {
            waiters.leave(attempt.token(), false);
            throw nodes.unavailable("acquire lock '" + attempt.key().name() + "'", outcomes);
        }
        if (answered < quorum) {
            int silent = nodes.size() - answered;
            LOG.log(
                    Level.DEBUG,
                    () -> "acquire of " + attempt + " missed the node timeout of " + Durations.format(bound) + " on "
                            + silent + " node(s) that answer otherwise; backing off");
        }
        if (granted >= quorum) {
            LOG.log(
                    Level.DEBUG,
                    () -> "granted " + attempt + " on a majority too late (" + elapsed / 1_000_000
                            + "ms of a validity of " + Durations.format(validity(attempt.lease()))
                            + "); released, trying again");
        }
        busyMillis.sort(null);
        int needed = Math.max(1, quorum - granted);
        long untilFree = needed > 0 && needed <= busyMillis.size()
                ? busyMillis.get(needed - 1)
                : RedisEngine.RETRY_CAP.toMillis();
        untilFree = Math.min(untilFree, RedisEngine.RETRY_CAP.toMillis())
                + ThreadLocalRandom.current().nextLong(JITTER.toMillis() + 1);
        CompletableFuture<Void> subscribed = waiters.join(attempt, keys.channel(), subscribedBefore);
        try {
            subscribed.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // a node that did not confirm the subscription is covered by the retry bound
        }
        return AcquireResult.busy(
                waiters.nextWait(attempt, granted > 0 || answered < quorum, Duration.ofMillis(untilFree)));
    }

    /**
     * Sends a release of the attempt to every connected node and does not wait: a node runs the
     * commands of its one connection in order, so the release comes after the acquire it undoes
     * (even one that timed out here) and before any later acquire of the same attempt. The script
     * goes with {@code EVAL}, not {@code EVALSHA}: a node that did not know it yet would answer
     * {@code NOSCRIPT}, and the script sent again after that answer could run after a later
     * acquire of the same attempt and undo it.
     */
    private void releaseEverywhere(Acquisition attempt, LockKeys keys) {
        nodes.sendToAll(commands -> RedlockRequests.undo(commands, attempt, keys), "release " + attempt);
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

    @Override
    public void abandon(Acquisition attempt) {
        waiters.leave(attempt.token(), false);
        releaseEverywhere(attempt, LockKeys.of(attempt.key()));
    }

    @Override
    public boolean renew(Acquisition attempt) {
        return renewAll(List.of(attempt)).isEmpty();
    }

    @Override
    public Set<Acquisition> renewAll(Collection<Acquisition> attempts) {
        List<Acquisition> all = new ArrayList<>(attempts);
        Duration shortestLease = timeout.multipliedBy(2);
        for (Acquisition attempt : all) {
            if (attempt.lease().compareTo(shortestLease) < 0) {
                shortestLease = attempt.lease();
            }
        }
        // a renewal answered after half the lease is of little use: fail early, the core retries
        Duration bound = shortestLease.dividedBy(2).compareTo(timeout) < 0 ? shortestLease.dividedBy(2) : timeout;
        List<Outcome<List<Long>>> outcomes = nodes.ask(bound, commands -> RedlockRequests.renew(commands, all));
        int[] renewed = new int[all.size()];
        int answered = 0;
        for (Outcome<List<Long>> outcome : outcomes) {
            if (outcome.answered()) {
                answered++;
                for (int i = 0; i < all.size(); i++) {
                    renewed[i] += outcome.value().get(i).intValue();
                }
            }
        }
        Set<Acquisition> lost = new HashSet<>();
        boolean undecided = false;
        for (int i = 0; i < all.size(); i++) {
            int refused = answered - renewed[i];
            if (renewed[i] >= quorum) {
                continue;
            }
            if (refused > nodes.size() - quorum) {
                lost.add(all.get(i));
            } else {
                undecided = true;
            }
        }
        if (undecided) {
            throw nodes.unavailable("renew " + all.size() + " lock(s)", outcomes);
        }
        return lost;
    }

    @Override
    public boolean release(Acquisition attempt) {
        LockKeys keys = LockKeys.of(attempt.key());
        waiters.leave(attempt.token(), true);
        List<Outcome<Long>> outcomes = nodes.ask(timeout, commands -> RedlockRequests.release(commands, attempt, keys));
        int released = 0;
        int answered = 0;
        for (Outcome<Long> outcome : outcomes) {
            if (outcome.answered()) {
                answered++;
                released += outcome.value() == 1L ? 1 : 0;
            }
        }
        if (released >= quorum) {
            return true;
        }
        if (answered - released > nodes.size() - quorum) {
            return false;
        }
        throw nodes.unavailable("release " + attempt, outcomes);
    }

    /** @return whether a majority of the nodes has the lock held */
    @Override
    public boolean isLocked(LockKey key) {
        LockKeys keys = LockKeys.of(key);
        List<Outcome<Long>> outcomes = nodes.ask(timeout, commands -> RedlockRequests.isLocked(commands, keys));
        int locked = 0;
        int answered = 0;
        for (Outcome<Long> outcome : outcomes) {
            if (outcome.answered()) {
                answered++;
                locked += outcome.value() == 1L ? 1 : 0;
            }
        }
        if (answered < quorum) {
            throw nodes.unavailable("check lock '" + key.name() + "'", outcomes);
        }
        return locked >= quorum;
    }

    /**
     * Reads the probe on a majority, then the eviction policy of every node (one {@code INFO} each,
     * all at once). A node that is down is a warning (its policy is unread), not a failure, as
     * long as a majority answers.
     */
    @Override
    public List<String> checkHealth(LockKey probe) {
        isLocked(probe);
        return eviction.atHealthCheck(RedlockNodes.evictionPolicies(nodes.list(), timeout));
    }

    /**
     * Lists the locks held on a majority of the nodes: each node is scanned ({@code SCAN}, never
     * {@code KEYS}) and every lock found is inspected on every node at once. A hold is reported
     * when a majority of the nodes has the same holder, with the time until fewer than a majority
     * keep it; there is no fencing token, and the number of waiters is unknown (-1).
     */
    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        List<Outcome<Set<String>>> listed =
                nodes.ask(timeout, commands -> RedlockRequests.lockNames(commands, namespace, prefix));
        if (RedlockNodes.answered(listed) < quorum) {
            throw nodes.unavailable("list the locks of namespace '" + namespace + "'", listed);
        }
        Set<String> found = new TreeSet<>();
        listed.stream().filter(Outcome::answered).forEach(outcome -> found.addAll(outcome.value()));
        List<String> names = new ArrayList<>(found);
        List<Outcome<List<List<?>>>> holds =
                nodes.ask(timeout, commands -> RedlockRequests.inspect(commands, namespace, names));
        if (RedlockNodes.answered(holds) < quorum) {
            throw nodes.unavailable("inspect the locks of namespace '" + namespace + "'", holds);
        }
        List<LockInfo> infos = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            Map<String, List<Long>> remainingByHolder = new HashMap<>();
            for (Outcome<List<List<?>>> outcome : holds) {
                if (outcome.answered()) {
                    List<?> hold = (List<?>) outcome.value().get(i).get(0);
                    if (!hold.isEmpty()) {
                        remainingByHolder
                                .computeIfAbsent(String.valueOf(hold.get(1)), holder -> new ArrayList<>())
                                .add(((Number) hold.get(3)).longValue());
                    }
                }
            }
            for (Map.Entry<String, List<Long>> holder : remainingByHolder.entrySet()) {
                List<Long> remaining = holder.getValue();
                if (remaining.size() >= quorum) {
                    remaining.sort(Collections.reverseOrder());
                    infos.add(new LockInfo(
                            names.get(i),
                            LockMode.EXCLUSIVE.label(),
                            holder.getKey(),
                            -1,
                            Optional.of(Duration.ofMillis(Math.max(0, remaining.get(quorum - 1)))),
                            RedisEngine.WAITERS_UNKNOWN));
                }
            }
        }
        return infos;
    }

    /** @return the waiters, for tests */
    LockWaiters waiters() {
        return waiters;
    }

    @Override
    public void close() {
        waiters.close();
        nodes.close();
    }

    @Override
    public String toString() {
        return "RedlockEngine[" + shown + "]";
    }
}
