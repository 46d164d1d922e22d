package io.cerberus.virtualthreads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.TestTimes;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * 10,000 async waiters ({@code acquireAsync}), each taking one of 100 locks once and releasing it
 * with {@code releaseAsync}, on each server engine ({@link EveryServerEngine}): every hold is
 * exclusive and its fencing token larger than the name's previous one ({@link ExclusiveHolds}),
 * all are done within {@link #BOUND}, the platform threads stay few (no thread is held per
 * waiter), and the log stays short. Needs no virtual threads: it runs on whatever JDK runs the module.
 */
class AsyncWaitersTest extends EveryServerEngine {
    private static final int WAITERS = 10_000;
    private static final int NAMES = 100;
    /** How long the 10,000 may take, scaled for slow machines: well under a minute per engine in CI. */
    private static final Duration BOUND = Duration.ofSeconds(40);
    /** Platform threads the run may add: the engines' own (I/O, renewal, timers) and the client's async pool. */
    private static final int MAX_NEW_PLATFORM_THREADS = 100;

    private static final int MAX_LOG_LINES = 100;

    /**
     * Fair locks on etcd queue every waiter's key in etcd, where its turn comes when its predecessor's
     * key goes: a blocking waiter watches that key, an async one learns of it only through the engine's
     * change notifications ({@link NotifiesChanges}), and without them at the busy answer's bound, the
     * lease (30 s). Measured without them: 253 and 738 of the 10,000 held within the bound. Runs once
     * the etcd engine notifies changes (issue 53).
     */
    @Override
    @Test
    void etcdFairLocks() throws Exception {
        assumeTrue(
                NotifiesChanges.class.isAssignableFrom(Class.forName("io.cerberus.etcd.EtcdEngine")),
                "an async fair waiter on etcd wakes only on its 30-s timer until the etcd engine notifies changes");
        super.etcdFairLocks();
    }

    @Override
    void contend(String uri, boolean fenced, boolean fair) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (Cerberus cerberus = Cerberus.connect(uri)) {
            // a first round loads the classes and starts the client's pools, so that the bound is the waiters'
            new Round(cerberus, fenced, fair, NAMES * 2).run();
            try (CapturedLogs logs = CapturedLogs.of("", Level.INFO)) {
                int platformBefore = threads.getThreadCount();
                threads.resetPeakThreadCount();
                long started = System.nanoTime();
                Round round = new Round(cerberus, fenced, fair, WAITERS);
                round.run();
                Duration took = Duration.ofNanos(System.nanoTime() - started);
                long logLines = logs.text().lines().count();
                System.out.printf(
                        "%s%s: %d async waiters on %d names in %d ms, at most %d platform threads (%d before), %d log lines%n",
                        engineOf(uri),
                        fair ? " (fair)" : "",
                        WAITERS,
                        NAMES,
                        took.toMillis(),
                        threads.getPeakThreadCount(),
                        platformBefore,
                        logLines);
                round.holds.assertExclusive();
                assertThat(threads.getPeakThreadCount() - platformBefore)
                        .as("platform threads added")
                        .isLessThanOrEqualTo(MAX_NEW_PLATFORM_THREADS);
                assertThat(logLines).as("log lines:%n%s", logs.text()).isLessThan(MAX_LOG_LINES);
            }
        }
    }

    /** Async waiters, one per hold, each taking one of the names once; all asked before the first is waited for. */
    private static final class Round {
        private final Cerberus cerberus;
        private final boolean fair;
        private final int count;
        private final ExclusiveHolds holds;
        private final AtomicInteger held = new AtomicInteger();

        Round(Cerberus cerberus, boolean fenced, boolean fair, int count) {
            this.cerberus = cerberus;
            this.fair = fair;
            this.count = count;
            this.holds = new ExclusiveHolds(NAMES, fenced);
        }

        void run() throws Exception {
            List<CompletableFuture<Lease>> asked = new ArrayList<>(count);
            CompletableFuture<?>[] waiters = new CompletableFuture<?>[count];
            for (int i = 0; i < count; i++) {
                int name = i % NAMES;
                DistributedLock lock = fair ? cerberus.fairLock("async-" + name) : cerberus.lock("async-" + name);
                // the wait outlasts the bound, so that a slow engine fails on the bound, saying how many were done
                CompletableFuture<Lease> ask = lock.acquireAsync(TestTimes.scaled(BOUND.multipliedBy(2)));
                asked.add(ask);
                waiters[i] = ask.thenCompose(lease -> {
                    holds.hold(name, lease);
                    held.incrementAndGet();
                    return lease.releaseAsync();
                });
            }
            try {
                CompletableFuture.allOf(waiters).get(TestTimes.scaled(BOUND).toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError(
                        held.get() + " of " + count + " async waiters held their lock within "
                                + TestTimes.scaled(BOUND),
                        e);
            } finally {
                // withdraws what is still waiting (cancelling the derived stages would not), so the client closes
                // cleanly
                for (CompletableFuture<Lease> ask : asked) {
                    ask.cancel(false);
                }
            }
            assertThat(held).as("holds").hasValue(count);
        }
    }
}
