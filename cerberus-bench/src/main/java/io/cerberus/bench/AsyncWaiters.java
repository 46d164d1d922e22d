package io.cerberus.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

/**
 * The {@code async} workload: N waiters, no thread each, over {@value #NAMES} names (waiter i on name
 * i mod {@value #NAMES}). A waiter asks with {@link Peer#lockAsync}, runs the critical section of
 * {@link Exclusion} once granted, releases with {@link Peer.AsyncHeld#unlockAsync}, and once the
 * release is answered asks again, until the cell's time is up. The waiters all ask at once, so each
 * name has N/{@value #NAMES} waiters queued at all times and every grant is a hand-off.
 *
 * <p>A cell ends when the last waiter's last hold is released: the grants still queued at the deadline
 * are counted, and so is the time they take. Latency is from asking to the grant. A waiter's steps run
 * on the threads that complete the peer's futures (the peer's pool or I/O threads); a future already
 * complete when its next step is chained continues on a small pool of the bench instead, so that a peer
 * that answers at once cannot grow a waiter's stack without bound.
 */
final class AsyncWaiters {
    /** The names the waiters spread over. */
    static final int NAMES = 4;
    /** How long after the cell's time the last waiters may take to be granted and release. */
    private static final Duration DRAIN = Duration.ofMinutes(1);

    private AsyncWaiters() {}

    /**
     * Runs {@code waiters} waiters for {@code duration} on the names {@code bench-<cell>-0} to {@code -3}.
     *
     * @throws IllegalStateException if a waiter failed, if the peer broke mutual exclusion, or if waiters were
     *     still waiting {@link #DRAIN} after the cell's time
     */
    static Bench.Samples sample(Peer peer, int waiters, Duration duration, String cell) throws InterruptedException {
        Exclusion exclusion = new Exclusion(NAMES);
        CountDownLatch finished = new CountDownLatch(waiters);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ExecutorService hop = Executors.newFixedThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "bench-async-hop");
            thread.setDaemon(true);
            return thread;
        });
        Waiter[] all = new Waiter[waiters];
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore = os.getProcessCpuTime();
        long begin = System.nanoTime();
        long deadline = begin + duration.toNanos();
        try {
            Cell shared = new Cell(peer, deadline, exclusion, finished, failure, hop);
            for (int i = 0; i < waiters; i++) {
                all[i] = new Waiter(shared, "bench-" + cell + "-" + (i % NAMES), i % NAMES, i + 1);
            }
            for (Waiter waiter : all) {
                waiter.ask();
            }
            if (!finished.await(duration.plus(DRAIN).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(peer.name() + ": " + finished.getCount() + " of " + waiters
                        + " async waiters still not done " + DRAIN.toSeconds() + " s after the cell's time");
            }
        } finally {
            hop.shutdownNow();
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        long cpu = os.getProcessCpuTime() - cpuBefore;
        if (failure.get() != null) {
            failure.get().printStackTrace();
            throw new IllegalStateException(
                    peer.name() + " failed in async with " + waiters + " waiters: " + failure.get(), failure.get());
        }
        exclusion.check(peer.name());
        long cycles = 0;
        int samples = 0;
        for (Waiter waiter : all) {
            cycles += waiter.cycles;
            samples += waiter.count;
        }
        long[] sorted = new long[samples];
        int at = 0;
        for (Waiter waiter : all) {
            System.arraycopy(waiter.latencies, 0, sorted, at, waiter.count);
            at += waiter.count;
        }
        Arrays.sort(sorted);
        return new Bench.Samples(cycles, seconds, cpu, sorted, Double.NaN);
    }

    /** What the waiters of a cell share: the peer, the end of the cell, the check, and how they say they are done. */
    private record Cell(
            Peer peer,
            long deadline,
            Exclusion exclusion,
            CountDownLatch finished,
            AtomicReference<Throwable> failure,
            ExecutorService hop) {}

    /**
     * One waiter's loop of ask, hold, release. Its steps never run at the same time (each is chained on the
     * previous one's future, which orders them), so its fields need no lock.
     */
    private static final class Waiter {
        private final Cell cell;
        private final String lockName;
        private final int name;
        private final long id;
        long[] latencies = new long[256];
        int count;
        long cycles;

        Waiter(Cell cell, String lockName, int name, long id) {
            this.cell = cell;
            this.lockName = lockName;
            this.name = name;
            this.id = id;
        }

        void ask() {
            if (System.nanoTime() - cell.deadline() >= 0 || cell.failure().get() != null) {
                cell.finished().countDown();
                return;
            }
            long asked = System.nanoTime();
            CompletableFuture<Peer.AsyncHeld> grant;
            try {
                grant = cell.peer().lockAsync(lockName, id);
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            then(grant, (held, error) -> {
                if (error != null) {
                    fail(error);
                    return;
                }
                granted(held, System.nanoTime() - asked);
            });
        }

        private void granted(Peer.AsyncHeld held, long waited) {
            cell.exclusion().hold(name, held.fencingToken());
            cycles++;
            if (count == latencies.length) {
                latencies = Arrays.copyOf(latencies, count * 2);
            }
            latencies[count++] = waited;
            then(held.unlockAsync(), (released, error) -> {
                if (error != null) {
                    fail(error);
                    return;
                }
                ask();
            });
        }

        private <T> void then(CompletableFuture<T> future, BiConsumer<T, Throwable> step) {
            if (future.isDone()) {
                future.whenCompleteAsync(step, cell.hop());
            } else {
                future.whenComplete(step);
            }
        }

        private void fail(Throwable error) {
            cell.failure().compareAndSet(null, error);
            cell.finished().countDown();
        }
    }
}
