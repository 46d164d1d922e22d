package io.cerberus.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.servers.FaultProxy;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.Poll;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What ShedLock's own suite does not reach: renewal past {@code lockAtMostFor}, a dead instance's
 * lock freed after the lease, a lost lock reported, the task's lease and fence, an engine switch.
 */
class CerberusLockProviderTest {
    private static final Duration LEASE = Duration.ofMillis(600);
    private final String job = "job-" + UUID.randomUUID();

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    /** A provider whose close() waits for no task: these cases leave locks held, as dead tasks would. */
    private static CerberusLockProvider provider(Cerberus cerberus) {
        return CerberusLockProvider.builder(cerberus)
                .shutdownWait(Duration.ZERO)
                .build();
    }

    private static Cerberus client(String uri) {
        return Cerberus.builder().engine(uri).defaultLease(LEASE).build();
    }

    @Test
    void renewingPastLockAtMostForKeepsTheLockWhileTheTaskRuns() throws Exception {
        try (Cerberus first = client("mem:shedlock-renew");
                Cerberus second = client("mem:shedlock-renew");
                CerberusLockProvider renewing = CerberusLockProvider.builder(first)
                        .shutdownWait(Duration.ZERO)
                        .renewPastLockAtMostFor(true)
                        .build();
                CerberusLockProvider other = provider(second)) {
            SimpleLock held = renewing.lock(config(job, Duration.ofMillis(200), Duration.ZERO))
                    .orElseThrow();

            // time must pass here: past lockAtMostFor and past several leases, which only renewal survives
            TimeUnit.MILLISECONDS.sleep(200 + 3 * LEASE.toMillis());

            assertThat(other.lock(config(job, Duration.ofMinutes(1), Duration.ZERO)))
                    .isEmpty();
            assertThat(renewing.lease(job)).get().extracting(Lease::isValid).isEqualTo(true);
            held.unlock();
            Optional<SimpleLock> next = other.lock(config(job, Duration.ofMinutes(1), Duration.ZERO));
            assertThat(next).isPresent();
            next.get().unlock();
        }
    }

    @Test
    void byDefaultLockAtMostForFreesTheLockOfATaskStillRunningAndItsLeaseIsGone() throws Exception {
        try (Cerberus first = client("mem:shedlock-cap");
                Cerberus second = client("mem:shedlock-cap");
                CerberusLockProvider capped = provider(first);
                CerberusLockProvider other = provider(second)) {
            SimpleLock held = capped.lock(config(job, Duration.ofMillis(300), Duration.ZERO))
                    .orElseThrow();
            Lease lease = capped.lease(job).orElseThrow();

            Poll.until(
                    "lockAtMostFor frees the lock",
                    Duration.ofSeconds(5),
                    () -> other.lock(config(job, Duration.ofMinutes(1), Duration.ZERO))
                            .isPresent());

            assertThat(capped.lease(job)).isEmpty();
            assertThat(lease.isValid()).isFalse();
            assertThat(held.extend(Duration.ofMinutes(1), Duration.ZERO)).isEmpty();
        }
    }

    @Test
    void aDeadInstanceFreesItsLockAfterTheLeaseNotAfterLockAtMostForAndTheLossIsReported() throws Exception {
        try (RedisServer redis = RedisServer.start();
                FaultProxy proxy = FaultProxy.start("127.0.0.1", redis.port());
                Cerberus holder = client("redis://127.0.0.1:" + proxy.port());
                Cerberus survivor = client(redis.uri())) {
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            try (CerberusLockProvider dying = CerberusLockProvider.builder(holder)
                            .shutdownWait(Duration.ZERO)
                            .onLost((lease, reason) -> lost.complete(reason))
                            .build();
                    CerberusLockProvider other = provider(survivor)) {
                dying.lock(config(job, Duration.ofMinutes(30), Duration.ZERO)).orElseThrow();
                assertThat(other.lock(config(job, Duration.ofMinutes(30), Duration.ZERO)))
                        .isEmpty();

                // the holder is cut off from Redis as if its process had died: no renewal, no release
                proxy.mode(FaultProxy.Mode.BLACKHOLE);
                long cut = System.nanoTime();
                Poll.until(
                        "the lock frees after the lease",
                        LEASE.plusSeconds(1),
                        () -> other.lock(config(job, Duration.ofMinutes(30), Duration.ZERO))
                                .isPresent());

                assertThat(Duration.ofNanos(System.nanoTime() - cut)).isLessThan(LEASE.plusSeconds(1));
                assertThat(lost.get(5, TimeUnit.SECONDS)).hasMessageContaining(job);
                assertThat(dying.lease(job).orElseThrow().isValid()).isFalse();
            }
        }
    }

    @Test
    void theRunningTaskReadsItsLeaseAndEachRunFencesAfterTheOneBefore() {
        try (Cerberus cerberus = client("mem:shedlock-fence");
                CerberusLockProvider locks = provider(cerberus)) {
            SimpleLock first = locks.lock(config(job, Duration.ofMinutes(1), Duration.ZERO))
                    .orElseThrow();
            Fence before = locks.lease(job).orElseThrow().fence();
            first.unlock();
            assertThat(locks.lease(job)).isEmpty();

            SimpleLock second = locks.lock(config(job, Duration.ofMinutes(1), Duration.ZERO))
                    .orElseThrow();
            Fence after = locks.lease(job).orElseThrow().fence();
            second.unlock();

            assertThat(before.isOlderThan(after)).isTrue();
        }
    }

    @Test
    void whileLockAtLeastForKeepsTheLockTheTaskNoLongerHasItsLease() {
        try (Cerberus cerberus = client("mem:shedlock-kept");
                CerberusLockProvider locks = provider(cerberus)) {
            locks.lock(config(job, Duration.ofMinutes(1), Duration.ofMinutes(1)))
                    .orElseThrow()
                    .unlock();

            assertThat(locks.lease(job)).isEmpty();
            assertThat(cerberus.lock(CerberusLockProvider.DEFAULT_PREFIX + job).isLocked())
                    .isTrue();
        }
    }

    @Test
    void aJobHeldAcrossAnEngineSwitchStillRunsOnceAndTheNextRunFencesAfterIt(@TempDir Path dir) {
        String a = "file:" + dir.resolve("a");
        String b = "file:" + dir.resolve("b");
        try (Cerberus first = Cerberus.builder()
                        .engine("a", a)
                        .engine("b", b)
                        .defaultLease(LEASE)
                        .lockDelay(Duration.ofMinutes(1))
                        .build();
                Cerberus second = Cerberus.builder()
                        .engine("a", a)
                        .engine("b", b)
                        .defaultLease(LEASE)
                        .lockDelay(Duration.ofMinutes(1))
                        .build();
                CerberusLockProvider one = provider(first);
                CerberusLockProvider two = provider(second)) {
            SimpleLock held =
                    one.lock(config(job, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
            Fence onA = one.lease(job).orElseThrow().fence();

            first.switchEngine("b");
            second.switchEngine("b");

            assertThat(two.lock(config(job, Duration.ofMinutes(1), Duration.ZERO)))
                    .describedAs("the hold on the engine switched away from still excludes")
                    .isEmpty();
            held.unlock();
            SimpleLock next =
                    two.lock(config(job, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
            assertThat(onA.isOlderThan(two.lease(job).orElseThrow().fence())).isTrue();
            next.unlock();
        }
    }

    @Test
    void theLockNamesArePrefixedSoJobsDoNotMeetTheApplicationsOwnLocks() {
        try (Cerberus cerberus = client("mem:shedlock-prefix");
                CerberusLockProvider plain = provider(cerberus);
                CerberusLockProvider bare = CerberusLockProvider.builder(cerberus)
                        .shutdownWait(Duration.ZERO)
                        .prefix("")
                        .build()) {
            cerberus.lock("reports").lock();
            try {
                assertThat(plain.lock(config("reports", Duration.ofMinutes(1), Duration.ZERO)))
                        .get()
                        .satisfies(SimpleLock::unlock);
                assertThat(bare.lock(config("reports", Duration.ofMinutes(1), Duration.ZERO)))
                        .isEmpty();
            } finally {
                cerberus.lock("reports").unlock();
            }
        }
    }

    @Test
    void aLockAtMostForOfAThousandYearsIsTakenAndReleased() {
        try (Cerberus cerberus = client("mem:shedlock-long");
                CerberusLockProvider locks = provider(cerberus)) {
            SimpleLock held = locks.lock(config(job, Duration.ofDays(365_000), Duration.ZERO))
                    .orElseThrow();
            assertThat(locks.lease(job)).isPresent();
            held.unlock();
            assertThat(cerberus.lock(CerberusLockProvider.DEFAULT_PREFIX + job).isLocked())
                    .isFalse();
        }
    }

    @Test
    void closingTheProviderWaitsForARunningTaskSoTheClientClosedAfterItFreesNoRunningJob() throws Exception {
        try (Cerberus cerberus = client("mem:shedlock-close")) {
            CerberusLockProvider locks = new CerberusLockProvider(cerberus);
            SimpleLock running = locks.lock(config(job, Duration.ofMinutes(1), Duration.ZERO))
                    .orElseThrow();
            Thread closing = new Thread(locks::close, "closing");
            closing.start();
            Poll.untilWaiting(closing, Duration.ofSeconds(5));

            assertThat(closing.isAlive()).as("close waits for the running task").isTrue();
            running.unlock();
            closing.join(TimeUnit.SECONDS.toMillis(5));
            assertThat(closing.isAlive()).isFalse();
        }
    }

    @Test
    void aShutdownWaitOfZeroClosesAtOnceUnderARunningTask() {
        try (Cerberus cerberus = client("mem:shedlock-close-now")) {
            CerberusLockProvider locks = CerberusLockProvider.builder(cerberus)
                    .shutdownWait(Duration.ZERO)
                    .build();
            locks.lock(config(job, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
            locks.close();
            assertThat(locks.lease(job))
                    .as("the task still runs, and holds its lock")
                    .isPresent();
        }
    }

    @Test
    void badSettingsAreRefusedByName() {
        assertThatThrownBy(() -> CerberusLockProvider.builder(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cerberus");
        try (Cerberus cerberus = client("mem:shedlock-settings")) {
            assertThatThrownBy(() -> CerberusLockProvider.builder(cerberus).prefix(null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("prefix");
            assertThatThrownBy(() -> CerberusLockProvider.builder(cerberus).shutdownWait(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("shutdownWait");
        }
    }
}
