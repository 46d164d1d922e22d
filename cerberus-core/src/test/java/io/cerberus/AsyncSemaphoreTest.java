package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
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
}
