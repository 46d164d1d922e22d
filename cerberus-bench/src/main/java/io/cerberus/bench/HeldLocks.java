package io.cerberus.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The held-locks workload: one client takes N locks of distinct names (from {@value #THREADS}
 * threads, each releasing its own at the end, as thread-bound locks need), holds them all for
 * {@value #LEASE_PERIODS} lease periods, and the bench counts what keeping them costs: the
 * server's requests over the hold, per lock and lease period, and the client's heap (after a full
 * GC) per held lock. Then a second client of the same peer asks the server about every name: a
 * name found free was lost during the hold, and that, like a release that fails, is a failure of
 * the peer, never a figure.
 */
final class HeldLocks {
    /** How a Cerberus hold stays alive on Redis and PostgreSQL (and etcd, with its client lease). */
    static final String CERBERUS_RENEWAL = "watchdog, every lease/3 (due renewals batched per engine)";
    /** How holds stay alive on ZooKeeper, for Cerberus and Curator alike. */
    static final String SESSION_RENEWAL =
            "session (timeout = lease; the server makes it at least 2 ticks, 4 s): pings, no per-lock renewal";
    /** The peers that cannot renew: their expiry is set past the hold so that they keep their locks. */
    static final String NO_RENEWAL = "none: expiry set past the hold";

    static final int LEASE_PERIODS = 3;
    private static final int THREADS = 4;
    private static final int WARM_LOCKS = 20;

    private HeldLocks() {}

    /**
     * A peer of this workload.
     *
     * @param renewal how a held lock stays alive, for the report
     * @param withLease makes the peer with the lease under test (a peer without renewal gets an expiry past the hold instead)
     */
    record Holder(String renewal, Function<Duration, Peer> withLease) {}

    /**
     * What holding cost one peer.
     *
     * @param requests the server's requests over the hold (its count of the engine group), NaN where not counted
     * @param heapBytes client heap growth after a full GC, from before the first lock to the end of the hold
     * @param lost locks the second client found free after the hold
     * @param releaseFailures releases that threw
     */
    record Result(
            String engine,
            String peer,
            String renewal,
            int locks,
            Duration lease,
            double acquireSeconds,
            double holdSeconds,
            double requests,
            long heapBytes,
            int lost,
            int releaseFailures) {
        double requestsPerLockPerLease() {
            return requests / locks / LEASE_PERIODS;
        }

        double heapBytesPerLock() {
            return (double) heapBytes / locks;
        }

        boolean failed() {
            return lost > 0 || releaseFailures > 0;
        }
    }

    /** @return the expiry of a peer that cannot renew: the hold and a margin for taking, checking and releasing the locks */
    static Duration pastTheHold(Duration lease) {
        return lease.multipliedBy(LEASE_PERIODS).plusMinutes(5);
    }

    /**
     * Runs the workload for every holder of the group, one after the other.
     *
     * @throws IllegalStateException if a peer fails to take a lock
     */
    static List<Result> run(EngineGroup group, int locks, Duration lease) throws InterruptedException {
        List<Result> results = new ArrayList<>();
        int run = 0;
        for (Holder holder : group.holders().values()) {
            Result result = hold(group, holder, locks, lease, "held-" + group.engine() + "-" + run++);
            results.add(result);
            System.err.printf(
                    Locale.ROOT,
                    "%-8s %-12s %-34s %,d locks taken in %.1f s, %.3f requests per lock per lease, %,.0f heap bytes per lock"
                            + "%s%n",
                    group.engine(),
                    "held-locks",
                    result.peer(),
                    locks,
                    result.acquireSeconds(),
                    result.requestsPerLockPerLease(),
                    result.heapBytesPerLock(),
                    result.failed()
                            ? ", LOST " + result.lost() + ", release failures " + result.releaseFailures()
                            : "");
        }
        return results;
    }

    private static Result hold(EngineGroup group, Holder holder, int locks, Duration lease, String prefix)
            throws InterruptedException {
        String[] names = new String[locks];
        for (int i = 0; i < locks; i++) {
            names[i] = prefix + "-" + i;
        }
        try (Peer peer = holder.withLease().apply(lease)) {
            for (int i = 0; i < WARM_LOCKS; i++) {
                peer.lock(prefix + "-warm-" + i).unlock();
            }
            long heapBefore = heapAfterGc();
            CountDownLatch acquired = new CountDownLatch(THREADS);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicInteger releaseFailures = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            long begin = System.nanoTime();
            for (int t = 0; t < THREADS; t++) {
                int first = t;
                Thread thread = new Thread(
                        () -> holdStripe(peer, names, first, acquired, release, failure, releaseFailures),
                        "bench-holder-" + t);
                threads.add(thread);
                thread.start();
            }
            acquired.await();
            double acquireSeconds = (System.nanoTime() - begin) / 1e9;
            if (failure.get() != null) {
                release.countDown();
                join(threads);
                throw new IllegalStateException(peer.name() + " failed to take its " + locks + " locks", failure.get());
            }
            long holdBegin = System.nanoTime();
            long before = group.requests() != null ? group.requests().getAsLong() : 0;
            Thread.sleep(lease.multipliedBy(LEASE_PERIODS).toMillis());
            double requests = group.requests() != null ? group.requests().getAsLong() - before : Double.NaN;
            double holdSeconds = (System.nanoTime() - holdBegin) / 1e9;
            long heapGrowth = heapAfterGc() - heapBefore;
            int lost;
            try (Peer checker = holder.withLease().apply(lease)) {
                lost = countFree(checker, names);
            } finally {
                release.countDown();
                join(threads);
            }
            return new Result(
                    group.engine(),
                    peer.name(),
                    holder.renewal(),
                    locks,
                    lease,
                    acquireSeconds,
                    holdSeconds,
                    requests,
                    heapGrowth,
                    lost,
                    releaseFailures.get());
        }
    }

    /** Takes every {@value #THREADS}th name from {@code first}, waits for the signal, releases them in the same thread. */
    private static void holdStripe(
            Peer peer,
            String[] names,
            int first,
            CountDownLatch acquired,
            CountDownLatch release,
            AtomicReference<Throwable> failure,
            AtomicInteger releaseFailures) {
        List<Peer.Held> held = new ArrayList<>(names.length / THREADS + 1);
        try {
            for (int i = first; i < names.length; i += THREADS) {
                held.add(peer.lock(names[i]));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, e);
        } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
        } finally {
            acquired.countDown();
        }
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Peer.Held hold : held) {
            try {
                hold.unlock();
            } catch (RuntimeException e) {
                if (releaseFailures.getAndIncrement() == 0) {
                    e.printStackTrace();
                }
            }
        }
    }

    /** @return how many of the names the checker finds free, asking from {@value #THREADS} threads */
    private static int countFree(Peer checker, String[] names) throws InterruptedException {
        AtomicInteger free = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int first = t;
            Thread thread = new Thread(
                    () -> {
                        try {
                            for (int i = first; i < names.length && failure.get() == null; i += THREADS) {
                                if (!checker.isLocked(names[i])) {
                                    free.incrementAndGet();
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            failure.compareAndSet(null, e);
                        } catch (RuntimeException e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bench-checker-" + t);
            threads.add(thread);
            thread.start();
        }
        join(threads);
        if (failure.get() != null) {
            throw new IllegalStateException(checker.name() + " could not check the held locks", failure.get());
        }
        return free.get();
    }

    private static void join(List<Thread> threads) throws InterruptedException {
        for (Thread thread : threads) {
            thread.join();
        }
    }

    /** @return the heap in use after full collections (the JVM may still keep some garbage: a few KB of noise) */
    private static long heapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
