package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ExpirySweepTest {
    private final AtomicInteger scheduled = new AtomicInteger();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1) {
        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            scheduled.incrementAndGet();
            return super.schedule(command, delay, unit);
        }
    };
    private final Map<String, AttemptState> states = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> expired = new ConcurrentHashMap<>();
    private final ExpirySweep sweep = new ExpirySweep(timer, states::values, state -> {
        states.remove(state.attempt.token(), state);
        expired.computeIfAbsent(state.attempt.token(), token -> new CountDownLatch(1))
                .countDown();
    });

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private AttemptState hold(String token, Duration lease) {
        Acquisition attempt = new Acquisition(new LockKey("ns", token), LockMode.EXCLUSIVE, token, "test", lease);
        AttemptState state = new AttemptState(attempt, LockKeys.bytes(token), 1, 0);
        states.put(token, state);
        expired.put(token, new CountDownLatch(1));
        sweep.startLease(state);
        state.granted = true;
        return state;
    }

    private boolean expiresWithin(String token, long millis) throws InterruptedException {
        return expired.get(token).await(TestTimes.millis(millis).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aHoldWhoseLeaseRunsOutIsEnded() throws InterruptedException {
        hold("short", Duration.ofMillis(100));
        AttemptState kept = hold("long", Duration.ofMinutes(10));
        assertThat(expiresWithin("short", 5_000)).as("the 100 ms hold ends").isTrue();
        assertThat(states.values()).containsExactly(kept);
    }

    @Test
    void aRenewedHoldOutlivesItsFirstDeadline() throws InterruptedException {
        AttemptState renewed = hold("renewed", Duration.ofMillis(300));
        hold("marker", Duration.ofMillis(600));
        sweep.startLease(renewed);
        // renewed again well before each deadline, until a hold that was not renewed has ended
        long end = System.nanoTime() + TestTimes.millis(5_000).toNanos();
        while (expired.get("marker").getCount() > 0 && System.nanoTime() < end) {
            sweep.startLease(renewed);
            Thread.sleep(50);
        }
        assertThat(expired.get("marker").getCount())
                .as("the hold not renewed ended")
                .isZero();
        assertThat(states).containsKey("renewed");
        assertThat(expiresWithin("renewed", 5_000))
                .as("and the renewed one ends once renewals stop")
                .isTrue();
    }

    @Test
    void holdsWithAlikeLeasesArmTheTaskOnce() {
        for (int i = 0; i < 1_000; i++) {
            hold("hold-" + i, Duration.ofMinutes(10));
        }
        assertThat(scheduled)
                .as("each later deadline is covered by the task armed for the first")
                .hasValue(1);
        hold("earlier", Duration.ofMinutes(1));
        assertThat(scheduled).as("an earlier deadline arms it again").hasValue(2);
        assertThat(List.copyOf(states.keySet())).hasSize(1_001);
    }
}
