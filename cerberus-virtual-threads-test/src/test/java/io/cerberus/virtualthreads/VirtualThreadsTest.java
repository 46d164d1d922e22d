package io.cerberus.virtualthreads;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.PinnedThreads;
import io.cerberus.testkit.TestTimes;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;

/**
 * 10,000 virtual threads, each taking one of 100 locks once, on each server engine
 * ({@link EveryServerEngine}): every hold is exclusive and its fencing token larger than the
 * name's previous one ({@link ExclusiveHolds}), all finish within a bound,
 * the platform threads stay few, the log stays short, and a JFR recording shows no virtual thread
 * pinned to its carrier in a Cerberus frame. The module compiles for Java 17 and runs on the JDK
 * that {@code virtual-threads.java} names (21 or newer; {@code ./test-all} passes the newest it
 * finds), so virtual threads are reached through reflection; on an older JDK every test is skipped
 * with the reason.
 */
@EnabledForJreRange(
        min = JRE.JAVA_21,
        disabledReason = "virtual threads need Java 21 or newer: run with"
                + " -Dvirtual-threads.java=<a newer JDK's bin/java> (./test-all finds one)")
class VirtualThreadsTest extends EveryServerEngine {
    private static final int THREADS = 10_000;
    private static final int NAMES = 100;
    /**
     * Platform threads the run may add: the engines' own (I/O, renewal, timers), the carriers, and gRPC's shared
     * executor under jetcd, a cached pool that grows with the callbacks in flight (134 live seen on a loaded
     * two-core machine). A thread per waiter would add thousands.
     */
    private static final int MAX_NEW_PLATFORM_THREADS = 200;

    private static final int MAX_LOG_LINES = 100;

    @TempDir
    Path recordings;

    @Override
    void contend(String uri, boolean fenced, boolean fair) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Path recorded = recordings.resolve("pinned.jfr");
        try (Cerberus cerberus = Cerberus.connect(uri)) {
            // a first round loads the classes: a virtual thread that waits for a class being loaded
            // stays pinned meanwhile, which is the JDK's doing and happens once per class
            new Round(cerberus, fenced, fair, NAMES * 2).run();
            try (CapturedLogs logs = CapturedLogs.of("", Level.INFO);
                    Recording recording = new Recording()) {
                recording.enable(PinnedThreads.EVENT).withStackTrace();
                recording.start();
                int platformBefore = threads.getThreadCount();
                threads.resetPeakThreadCount();
                long started = System.nanoTime();
                Round round = new Round(cerberus, fenced, fair, THREADS);
                round.run();
                Duration took = Duration.ofNanos(System.nanoTime() - started);
                recording.stop();
                recording.dump(recorded);
                long logLines = logs.text().lines().count();
                System.out.printf(
                        "%s: %d virtual threads on %d names in %d ms, at most %d platform threads (%d before), %d log lines%n",
                        engineOf(uri),
                        THREADS,
                        NAMES,
                        took.toMillis(),
                        threads.getPeakThreadCount(),
                        platformBefore,
                        logLines);
                round.assertExclusive();
                assertThat(threads.getPeakThreadCount() - platformBefore)
                        .as("platform threads added; live now, by name: %s", liveThreadsByName())
                        .isLessThanOrEqualTo(MAX_NEW_PLATFORM_THREADS);
                assertThat(logLines).as("log lines:%n%s", logs.text()).isLessThan(MAX_LOG_LINES);
            }
        }
        assertThat(PinnedThreads.inCerberus(recorded))
                .as("virtual threads pinned in a Cerberus frame")
                .isEmpty();
    }

    /** Virtual threads, one per hold, each taking one of the names once. */
    private static final class Round {
        private final Cerberus cerberus;
        private final boolean fair;
        private final int count;
        private final ExclusiveHolds holds;
        private final AtomicInteger held = new AtomicInteger();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Round(Cerberus cerberus, boolean fenced, boolean fair, int count) {
            this.cerberus = cerberus;
            this.fair = fair;
            this.count = count;
            this.holds = new ExclusiveHolds(NAMES, fenced);
        }

        void run() throws Exception {
            ExecutorService virtual = virtualThreadPerTask();
            try {
                for (int i = 0; i < count; i++) {
                    int name = i % NAMES;
                    virtual.execute(() -> hold(name));
                }
                virtual.shutdown();
                assertThat(virtual.awaitTermination(
                                TestTimes.scaled(Duration.ofMinutes(3)).toMillis(), TimeUnit.MILLISECONDS))
                        .as("all %d threads done within the bound", count)
                        .isTrue();
            } finally {
                virtual.shutdownNow();
            }
            assertThat(failure.get()).as("the first failure of a thread").isNull();
            assertThat(held).as("holds").hasValue(count);
        }

        private void hold(int name) {
            try (Lease lease = (fair ? cerberus.fairLock("vt-" + name) : cerberus.lock("vt-" + name))
                    .acquire(Duration.ofMinutes(2))) {
                holds.hold(name, lease);
                held.incrementAndGet();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }

        void assertExclusive() {
            holds.assertExclusive();
        }
    }

    /** @return the live platform threads counted by name, digits dropped (what added threads, when too many were) */
    private static Map<String, Long> liveThreadsByName() {
        return Thread.getAllStackTraces().keySet().stream()
                .collect(Collectors.groupingBy(
                        thread -> thread.getName().replaceAll("[0-9]+", "#"), TreeMap::new, Collectors.counting()));
    }

    /** @return {@code Executors.newVirtualThreadPerTaskExecutor()}, which Java 17 (this module's release) does not have */
    private static ExecutorService virtualThreadPerTask() throws ReflectiveOperationException {
        return (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    }
}
