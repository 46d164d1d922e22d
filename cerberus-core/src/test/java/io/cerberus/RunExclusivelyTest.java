package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The scheduled job's "once per tick across the cluster": one instance runs, the others skip
 * quietly (counted, never an error), the lock is kept for at least the asked time, and a lock lost
 * while the job ran is reported after it.
 */
class RunExclusivelyTest {
    private final String store = "jobs-" + UUID.randomUUID();
    private final List<Cerberus> clients = new ArrayList<>();
    private final List<String> skipped = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeClients() {
        clients.forEach(Cerberus::close);
    }

    private Cerberus instance() {
        Cerberus cerberus = Cerberus.builder()
                .engine("mem:" + store)
                .metrics(new CerberusMetrics() {
                    @Override
                    public void skippedRun(String engine, String name) {
                        skipped.add(name);
                    }
                })
                .build();
        clients.add(cerberus);
        return cerberus;
    }

    @Test
    void fiveInstancesOnOneTickRunTheJobOnceAndTheOthersSkipQuietly() throws Exception {
        List<Cerberus> instances = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            instances.add(instance());
        }
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch tick = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try {
            List<Future<Boolean>> ran = new ArrayList<>();
            for (Cerberus instance : instances) {
                ran.add(pool.submit(() -> {
                    tick.await();
                    return instance.runExclusively("reminders", Duration.ofSeconds(2), lease -> {
                        assertThat(lease.isValid()).isTrue();
                        runs.incrementAndGet();
                    });
                }));
            }
            tick.countDown();
            int here = 0;
            for (Future<Boolean> future : ran) {
                here += future.get(10, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(runs).hasValue(1);
            assertThat(here).isEqualTo(1);
            assertThat(skipped).containsOnly("reminders").hasSize(4);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theLockIsKeptAtLeastAsAskedThenFreed() throws Exception {
        Cerberus first = instance();
        Cerberus late = instance();
        long began = System.nanoTime();
        assertThat(first.runExclusively("tick", Duration.ofMillis(500), lease -> {}))
                .isTrue();
        assertThat(late.runExclusively("tick", Duration.ZERO, lease -> {}))
                .as("a late instance on the same tick skips: the lock is kept after a fast run")
                .isFalse();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        boolean ran = false;
        while (!ran && System.nanoTime() < deadline) {
            ran = late.runExclusively("tick", Duration.ZERO, lease -> {});
            if (!ran) {
                Thread.sleep(20); // a poll with a deadline: the kept lock is released by the first instance's timer
            }
        }
        assertThat(ran).as("the next tick runs once the kept time is over").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        assertThat(first.lock("tick").isLocked()).isFalse();
    }

    @Test
    void aRunLongerThanItsKeepIsReleasedAsItEnds() {
        Cerberus cerberus = instance();
        assertThat(cerberus.runExclusively("long", Duration.ofMillis(50), lease -> {
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(150);
                    while (System.nanoTime() - end < 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(end - System.nanoTime()); // the job's work
                    }
                }))
                .isTrue();
        assertThat(cerberus.lock("long").isLocked())
                .as("its 50 ms were over before the run ended: nothing is kept")
                .isFalse();
    }

    @Test
    void aFailingJobKeepsTheLockForWhatIsLeftOfItsKeepAndNoLonger() {
        Cerberus cerberus = instance();
        assertThatThrownBy(() -> cerberus.runExclusively("fails-fast", Duration.ofSeconds(30), lease -> {
                    throw new IllegalStateException("job failed");
                }))
                .hasMessage("job failed");
        assertThat(cerberus.lock("fails-fast").isLocked())
                .as("a failed run keeps the lock for the rest of its keep, as a run that succeeds does")
                .isTrue();

        assertThatThrownBy(() -> cerberus.runExclusively("fails-late", Duration.ofMillis(50), lease -> {
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(150);
                    while (System.nanoTime() - end < 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(end - System.nanoTime()); // the job's work
                    }
                    throw new IllegalStateException("job failed late");
                }))
                .hasMessage("job failed late");
        assertThat(cerberus.lock("fails-late").isLocked())
                .as("its 50 ms were over before the run failed: nothing is kept")
                .isFalse();
    }

    @Test
    void aFailingJobReleasesAtOnceWithoutAKeepAndItsErrorIsThrown() {
        Cerberus cerberus = instance();
        assertThatThrownBy(() -> cerberus.runExclusively("failing", Duration.ZERO, lease -> {
                    throw new IllegalStateException("job failed");
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("job failed");
        assertThat(cerberus.lock("failing").isLocked()).isFalse();
    }

    @Test
    void badArgumentsAreRefusedWithTheRule() {
        Cerberus cerberus = instance();
        assertThatThrownBy(() -> cerberus.runExclusively("x", Duration.ofMillis(-1), lease -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("atLeast");
        assertThatThrownBy(() -> cerberus.runExclusively("x", Duration.ZERO, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task");
        assertThatThrownBy(() -> cerberus.runExclusively("", Duration.ZERO, lease -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name");
    }
}
