package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.servers.Await;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsTest {
    private final String store = "metrics-" + UUID.randomUUID();

    /** Records every call as a line of text. */
    private static final class Recorder implements CerberusMetrics {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final CountDownLatch lost = new CountDownLatch(1);
        /** The waits and holds reported, in order. */
        final List<Duration> durations = new CopyOnWriteArrayList<>();

        @Override
        public void acquisition(String engine, String mode, AcquireOutcome outcome, Duration waited) {
            calls.add("acquisition " + engine + " " + mode + " " + outcome);
            durations.add(waited);
        }

        @Override
        public void release(String engine, String mode, Duration held) {
            calls.add("release " + engine + " " + mode);
            durations.add(held);
        }

        @Override
        public void loss(String engine, String mode) {
            calls.add("loss " + engine + " " + mode);
            lost.countDown();
        }

        @Override
        public void renewals(String engine, RenewalOutcome outcome, int holds) {
            calls.add("renewals " + engine + " " + outcome + " " + holds);
        }

        @Override
        public void engineSwitch(EngineSwitchEvent event) {
            calls.add("switch " + event.from() + " " + event.to() + " " + event.reason());
        }
    }

    @Test
    void acquisitionsReleasesAndSwitchesAreReported() throws Exception {
        Recorder recorder = new Recorder();
        try (Cerberus cerberus = Cerberus.builder()
                        .engine("main", "mem:" + store)
                        .engine("spare", "mem:" + store + "-spare")
                        .lockDelay(Duration.ZERO)
                        .metrics(recorder)
                        .build();
                Cerberus other = Cerberus.builder()
                        .engine("mem:" + store)
                        .metrics(CerberusMetrics.NONE)
                        .build()) {
            DistributedLock lock = cerberus.lock("job");
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.tryLock()).as("reentrant: not reported").isTrue();
            lock.unlock();
            lock.unlock();
            assertThat(other.lock("job").tryLock()).isTrue();
            assertThat(cerberus.lock("job").tryLock(10, TimeUnit.MILLISECONDS)).isFalse();
            other.lock("job").unlock();
            cerberus.switchEngine();
            try (Lease lease = cerberus.readWriteLock("job").readLock().acquire(Duration.ZERO)) {
                assertThat(lease.engineName()).isEqualTo("spare");
            }
            assertThat(recorder.calls)
                    .containsExactly(
                            "acquisition main exclusive GRANTED",
                            "release main exclusive",
                            "acquisition main exclusive TIMED_OUT",
                            "switch main spare MANUAL",
                            "acquisition spare read GRANTED",
                            "release spare read");
            assertThat(recorder.durations)
                    .as("waits and holds measured from their start")
                    .hasSize(5)
                    .allSatisfy(d -> assertThat(d).isBetween(Duration.ZERO, Duration.ofSeconds(30)));
            assertThat(recorder.durations.get(2))
                    .as("the timed-out acquisition waited its 10 ms")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(10));
        }
    }

    /** @return a client of a scripted engine ({@link ScriptedEngineProvider#last}) with 300-ms leases, reporting to {@code recorder} */
    private Cerberus scriptedClient(Recorder recorder) {
        return Cerberus.builder()
                .engine("scripted:" + store)
                .defaultLease(Duration.ofMillis(300))
                .metrics(recorder)
                .build();
    }

    @Test
    void renewalsAndLossesAreReported() throws Exception {
        Recorder recorder = new Recorder();
        try (Cerberus cerberus = scriptedClient(recorder)) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.last;
            DistributedLock lock = cerberus.lock("job");
            assertThat(lock.tryLock()).isTrue();
            Await.until(
                    "a renewal reported",
                    Duration.ofSeconds(10),
                    () -> recorder.calls.contains("renewals scripted RENEWED 1"));
            engine.renewals = ScriptedEngineProvider.RenewalMode.REFUSE;
            assertThat(recorder.lost.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(recorder.calls).contains("renewals scripted REFUSED 1", "loss scripted exclusive");
            assertThat(recorder.calls.stream()
                            .filter(call -> call.startsWith("renewals scripted RENEWED "))
                            .mapToInt(call -> Integer.parseInt(call.substring(call.lastIndexOf(' ') + 1)))
                            .sum())
                    .as("holds counted as renewed: the ones the engine renewed, none of those it refused")
                    .isEqualTo(engine.renewedHolds.get());
        }
    }

    @Test
    void renewalsThatCannotReachTheEngineAreReportedAsUnreachable() throws Exception {
        Recorder recorder = new Recorder();
        try (Cerberus cerberus = scriptedClient(recorder)) {
            ScriptedEngineProvider.last.renewals = ScriptedEngineProvider.RenewalMode.UNREACHABLE;
            DistributedLock first = cerberus.lock("first");
            DistributedLock second = cerberus.lock("second");
            assertThat(first.tryLock()).isTrue();
            assertThat(second.tryLock()).isTrue();
            assertThat(recorder.lost.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(recorder.calls)
                    .as("every try of a renewal the engine did not answer is counted, none as renewed or refused")
                    .anyMatch(call -> call.matches("renewals scripted UNREACHABLE [12]"))
                    .noneMatch(call -> call.startsWith("renewals scripted RENEWED")
                            || call.startsWith("renewals scripted REFUSED"));
        }
    }

    @Test
    void aMetricsReceiverOnTheClassPathThatCannotBeLoadedLeavesTheClientWithoutMetrics(@TempDir Path dir)
            throws Exception {
        Path services = Files.createDirectories(dir.resolve("META-INF/services"));
        Files.writeString(services.resolve(CerberusMetrics.class.getName()), "io.cerberus.NoSuchMetrics\n");
        ClassLoader before = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader broken = new URLClassLoader(new URL[] {dir.toUri().toURL()}, before)) {
            Thread.currentThread().setContextClassLoader(broken);
            try (Cerberus cerberus = Cerberus.builder().engine("mem:" + store).build()) {
                DistributedLock lock = cerberus.lock("unmeasured");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
        } finally {
            Thread.currentThread().setContextClassLoader(before);
        }
    }

    @Test
    void aFailingMetricsReceiverDoesNotDisturbLocking() throws Exception {
        CerberusMetrics broken = new CerberusMetrics() {
            @Override
            public void acquisition(String engine, String mode, AcquireOutcome outcome, Duration waited) {
                throw new IllegalStateException("metrics backend down");
            }

            @Override
            public void release(String engine, String mode, Duration held) {
                throw new IllegalStateException("metrics backend down");
            }
        };
        try (Cerberus cerberus =
                Cerberus.builder().engine("mem:" + store).metrics(broken).build()) {
            DistributedLock lock = cerberus.lock("job");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void aMetricsReceiverWhoseObserversOrWhoseAcquiringFailsDoesNotDisturbLocking() throws Exception {
        CerberusMetrics.HoldObserver brokenHold = new CerberusMetrics.HoldObserver() {
            @Override
            public void released() {
                throw new IllegalStateException("metrics backend down");
            }
        };
        CerberusMetrics.WaitObserver brokenWait = new CerberusMetrics.WaitObserver() {
            @Override
            public String holderNote() {
                throw new IllegalStateException("metrics backend down");
            }

            @Override
            public boolean wantsHolder() {
                throw new IllegalStateException("metrics backend down");
            }

            @Override
            public void busy(String holder) {
                throw new IllegalStateException("metrics backend down");
            }

            @Override
            public CerberusMetrics.HoldObserver ended(CerberusMetrics.AcquireOutcome outcome) {
                if (outcome == CerberusMetrics.AcquireOutcome.GRANTED) {
                    return brokenHold;
                }
                throw new IllegalStateException("metrics backend down");
            }
        };
        CerberusMetrics observersFail = new CerberusMetrics() {
            @Override
            public WaitObserver acquiring(String engine, String mode, String name) {
                return brokenWait;
            }
        };
        CerberusMetrics acquiringFails = new CerberusMetrics() {
            @Override
            public WaitObserver acquiring(String engine, String mode, String name) {
                throw new IllegalStateException("metrics backend down");
            }
        };
        for (CerberusMetrics broken : List.of(observersFail, acquiringFails)) {
            try (Cerberus cerberus = Cerberus.builder()
                            .engine("mem:" + store)
                            .metrics(broken)
                            .build();
                    Cerberus other = Cerberus.connect("mem:" + store)) {
                DistributedLock lock = cerberus.lock("observed");
                DistributedLock elsewhere = other.lock("observed");
                elsewhere.lock();
                assertThat(lock.tryAcquire(Duration.ofMillis(50)))
                        .as("held elsewhere")
                        .isEmpty();
                elsewhere.unlock();
                assertThat(lock.tryAcquire(Duration.ofMillis(50))).as("free").hasValueSatisfying(Lease::close);
            }
        }
    }
}
