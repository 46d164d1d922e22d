package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Async takes of several permits at once when only some are free: what a take finds free and cannot use is given
 * back, and nothing of it stays held when it waits in vain.
 */
class AsyncSemaphoreTest {
    private final String store = "mem:async-permits-" + UUID.randomUUID();

    @Test
    void aTakeOfTwoThatTimesOutWhileOneIsHeldElsewhereLeavesBothFreeOnceThatOneIsReleased() throws Exception {
        try (Cerberus holder = Cerberus.connect(store);
                Cerberus taker = Cerberus.connect(store)) {
            Permits one = holder.semaphore("pool", 2).acquire(1, Duration.ZERO);
            CompletableFuture<Optional<Permits>> two =
                    taker.semaphore("pool", 2).tryAcquireAsync(2, Duration.ofMillis(300));
            assertThat(two.get(10, TimeUnit.SECONDS))
                    .as("one of the two is held all along")
                    .isEmpty();
            one.close();
            assertThat(taker.semaphore("pool", 2).tryAcquire(2, Duration.ZERO))
                    .as("the permit the take found free was given back")
                    .hasValueSatisfying(Permits::close);
            assertThat(holder.semaphore("pool", 2).availablePermits()).isEqualTo(2);
        }
    }

    @Test
    void anAsyncTakeOfTwoWaitsUntilBothAreFreeAndThenHoldsTwoDistinctPermits() throws Exception {
        try (Cerberus holder = Cerberus.connect(store);
                Cerberus taker = Cerberus.connect(store)) {
            Permits held = holder.semaphore("pool", 3).acquire(2, Duration.ZERO);
            CompletableFuture<Permits> two = taker.semaphore("pool", 3).acquireAsync(2, Duration.ofSeconds(10));
            assertThat(two).as("one permit is free, two are asked for").isNotDone();

            held.close();
            try (Permits taken = two.get(10, TimeUnit.SECONDS)) {
                assertThat(taken.count()).isEqualTo(2);
                assertThat(taken.permits())
                        .extracting(Permit::slot)
                        .doesNotHaveDuplicates()
                        .allSatisfy(slot -> assertThat(slot).isBetween(0, 2));
                assertThat(holder.semaphore("pool", 3).availablePermits()).isEqualTo(1);
            }
            assertThat(holder.semaphore("pool", 3).availablePermits()).isEqualTo(3);
        }
    }

    @Test
    void anAsyncTakeWhoseWaitMeetsAnEngineErrorFailsWithItAndHoldsNothing() throws Exception {
        String scripted = "scripted:async-permits-" + UUID.randomUUID();
        try (Cerberus holder = Cerberus.connect(scripted);
                Cerberus taker = Cerberus.connect(scripted)) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.last;
            Permits all = holder.semaphore("pool", 2).acquire(2, Duration.ZERO);
            CompletableFuture<Permits> one = taker.semaphore("pool", 2).acquireAsync(1, Duration.ofSeconds(10));
            Await.until("the take's first ask", Duration.ofSeconds(5), () -> engine.acquireCalls.get() > 0);
            engine.acquireErrors.set(1); // the waiting take's next ask
            all.close();

            assertThatThrownBy(() -> one.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(AssertionError.class);
            assertThat(holder.semaphore("pool", 2).availablePermits())
                    .as("the failed take holds nothing")
                    .isEqualTo(2);
        }
    }
}
