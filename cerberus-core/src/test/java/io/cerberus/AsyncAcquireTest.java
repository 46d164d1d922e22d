package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.SwitchableEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The async acquire keeps the blocking one's rules where only the core decides: a wait that sees a
 * switch goes on on the new engine, an engine in its lock-delay must grant too, an unreachable engine
 * is tried again within the wait, closing the client ends every pending wait, and each outcome is
 * counted once.
 */
class AsyncAcquireTest {
    private final String a = "a-" + UUID.randomUUID();
    private final String b = "b-" + UUID.randomUUID();

    @AfterEach
    void bringBack() {
        SwitchableEngineProvider.down(a, false);
        SwitchableEngineProvider.down(b, false);
    }

    private CerberusBuilder twoEngines() {
        return Cerberus.builder().engine("primary", "switchable:" + a).engine("secondary", "switchable:" + b);
    }

    private Cerberus onlyA() {
        return Cerberus.builder().engine("primary", "switchable:" + a).build();
    }

    @Test
    void anAsyncWaitWhoseChangeNoticeCannotBeRegisteredTriesAgainWithinItsWait() throws Exception {
        String store = "scripted:" + UUID.randomUUID();
        try (Cerberus holder = Cerberus.builder().engine(store).build();
                Cerberus cerberus = Cerberus.builder().engine(store).build()) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.opened(store);
            engine.notifiesChanges = true;
            engine.changeNoticeFailures.set(1);
            assertThat(holder.lock("stock").tryLock()).isTrue();
            CompletableFuture<Lease> waiting = cerberus.lock("stock").acquireAsync(Duration.ofSeconds(20));
            Await.until(
                    "the wait to try to register its change notice",
                    Duration.ofSeconds(5),
                    () -> engine.changeNoticeFailures.get() == 0);
            holder.lock("stock").unlock();
            try (Lease lease = waiting.get(5, TimeUnit.SECONDS)) {
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    @Test
    void anAsyncWaitOnTheEngineSwitchedAwayFromGoesOnOnTheNewOne() throws Exception {
        try (Cerberus holder = onlyA();
                Cerberus cerberus = twoEngines().lockDelay(Duration.ZERO).build()) {
            assertThat(holder.lock("stock").tryLock()).isTrue();
            CompletableFuture<Lease> waiting = cerberus.lock("stock").acquireAsync(Duration.ofSeconds(20));
            assertThat(waiting).isNotDone();
            long switchedAt = System.nanoTime();
            cerberus.switchEngine();
            try (Lease lease = waiting.get(5, TimeUnit.SECONDS)) {
                assertThat(lease.engineName()).isEqualTo("secondary");
            }
            assertThat(Duration.ofNanos(System.nanoTime() - switchedAt))
                    .as("soon after the switch")
                    .isLessThan(Duration.ofSeconds(2));
            assertThat(holder.lock("stock").isHeldByCurrentThread()).isTrue();
            holder.lock("stock").unlock();
        }
    }

    @Test
    void duringTheLockDelayAnAsyncGrantNeedsTheOldEngineToo() throws Exception {
        try (Cerberus unswitched = onlyA();
                Cerberus switched = twoEngines().build()) {
            DistributedLock old = unswitched.lock("stock");
            assertThat(old.tryLock()).isTrue();
            switched.switchEngine();
            assertThat(switched.lock("stock")
                            .tryAcquireAsync(Duration.ofMillis(100))
                            .get(5, TimeUnit.SECONDS))
                    .isEmpty();
            assertThat(switched.inspect(""))
                    .as("the grant on the new engine is given back")
                    .isEmpty();

            CompletableFuture<Lease> waiting = switched.lock("stock").acquireAsync(Duration.ofSeconds(10));
            old.unlock();
            try (Lease lease = waiting.get(5, TimeUnit.SECONDS)) {
                assertThat(lease.engineName()).isEqualTo("secondary");
                assertThat(unswitched.lock("stock").tryLock())
                        .as("the old engine holds it for the switched client")
                        .isFalse();
            }
            assertThat(unswitched.lock("stock").tryLock())
                    .as("released on both engines")
                    .isTrue();
            unswitched.lock("stock").unlock();
        }
    }

    @Test
    void anAsyncWaitTriesAnUnreachableEngineAgainWithinItsWaitThenFailsNamingIt() throws Exception {
        try (Cerberus cerberus = onlyA()) {
            SwitchableEngineProvider.down(a, true);
            long start = System.nanoTime();
            CompletableFuture<Optional<Lease>> failed = cerberus.lock("stock").tryAcquireAsync(Duration.ofMillis(300));
            assertThatThrownBy(() -> failed.get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("switchable:" + a);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("tried for the whole wait")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(300))
                    .isLessThan(Duration.ofSeconds(3));

            CompletableFuture<Lease> waiting = cerberus.lock("stock").acquireAsync(Duration.ofSeconds(10));
            SwitchableEngineProvider.down(a, false);
            try (Lease lease = waiting.get(5, TimeUnit.SECONDS)) {
                assertThat(lease.engineName())
                        .as("granted once the engine is back")
                        .isEqualTo("primary");
            }
        }
    }

    @Test
    void closingTheClientEndsEveryPendingAsyncWaitAtOnce() throws Exception {
        Cerberus holder = Cerberus.connect("mem:" + a);
        Cerberus cerberus = Cerberus.connect("mem:" + a);
        try {
            assertThat(holder.lock("stock").tryLock()).isTrue();
            CompletableFuture<Lease> waiting = cerberus.lock("stock").acquireAsync(Duration.ofMinutes(5));
            CompletableFuture<Lease> other = cerberus.lock("other-" + a).acquireAsync(Duration.ofMinutes(5));
            other.get(5, TimeUnit.SECONDS);
            long closedAt = System.nanoTime();
            cerberus.close();
            assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - closedAt)).isLessThan(Duration.ofSeconds(2));
            assertThatThrownBy(() -> cerberus.lock("stock")).isInstanceOf(IllegalStateException.class);
            holder.lock("stock").unlock();
        } finally {
            cerberus.close();
            holder.close();
        }
    }

    @Test
    void closingTheClientEndsAnAsyncWaitForAnUnreachableEngineWithTheClosedClientsError() throws Exception {
        Cerberus cerberus = onlyA();
        try {
            SwitchableEngineProvider.down(a, true);
            CompletableFuture<Lease> waiting = cerberus.lock("stock").acquireAsync(Duration.ofMinutes(5));
            Await.until(
                    "two asks: the wait is in its pauses between tries",
                    Duration.ofSeconds(5),
                    () -> SwitchableEngineProvider.refused(a) >= 2);
            long closedAt = System.nanoTime();
            cerberus.close();
            assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                    .as("not a StackOverflowError from re-arming the pause on a closed client's timer")
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            assertThat(Duration.ofNanos(System.nanoTime() - closedAt)).isLessThan(Duration.ofSeconds(2));
        } finally {
            cerberus.close();
        }
    }

    @Test
    void eachAsyncOutcomeIsCountedOnceCancelledIncluded() throws Exception {
        List<CerberusMetrics.AcquireOutcome> outcomes = new CopyOnWriteArrayList<>();
        CerberusMetrics metrics = new CerberusMetrics() {
            @Override
            public void acquisition(
                    String engine, String mode, CerberusMetrics.AcquireOutcome outcome, Duration waited) {
                outcomes.add(outcome);
            }
        };
        try (Cerberus holder = Cerberus.connect("mem:" + a);
                Cerberus cerberus =
                        Cerberus.builder().engine("mem:" + a).metrics(metrics).build()) {
            assertThat(holder.lock("stock").tryLock()).isTrue();
            assertThat(cerberus.lock("stock")
                            .tryAcquireAsync(Duration.ofMillis(50))
                            .get(5, TimeUnit.SECONDS))
                    .isEmpty();
            CompletableFuture<Lease> cancelled = cerberus.lock("stock").acquireAsync(Duration.ofSeconds(30));
            assertThat(cancelled.cancel(true)).isTrue();
            holder.lock("stock").unlock();
            cerberus.lock("stock")
                    .acquireAsync(Duration.ofSeconds(5))
                    .get(5, TimeUnit.SECONDS)
                    .close();
            assertThat(waitFor(outcomes, 3))
                    .containsExactlyInAnyOrder(
                            CerberusMetrics.AcquireOutcome.TIMED_OUT,
                            CerberusMetrics.AcquireOutcome.CANCELLED,
                            CerberusMetrics.AcquireOutcome.GRANTED);
        }
    }

    private static List<CerberusMetrics.AcquireOutcome> waitFor(
            List<CerberusMetrics.AcquireOutcome> outcomes, int count) {
        // the cancelled run counts its outcome on the pool
        Await.until(count + " outcomes counted", Duration.ofSeconds(5), () -> outcomes.size() >= count);
        return List.copyOf(outcomes);
    }

    @Test
    void badWaitsAndLeasesAreRefusedWithTheRuleBeforeAnythingRuns() {
        try (Cerberus cerberus = Cerberus.connect("mem:" + a)) {
            DistributedLock lock = cerberus.lock("stock");
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("wait");
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(1), Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease");
            assertThatThrownBy(() -> lock.tryAcquireAsync(null)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
