package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {
    private static final Duration LONG = Timeouts.scaled(Duration.ofSeconds(30));

    @Test
    void returnsOnceTheConditionHolds() {
        AtomicInteger checks = new AtomicInteger();
        Await.until("the third check", LONG, () -> checks.incrementAndGet() == 3);
        assertThat(checks).hasValue(3);
    }

    @Test
    void failsAtTheDeadlineNamingWhatItAwaited() {
        assertThatThrownBy(() -> Await.until("something that never happens", Duration.ofMillis(20), () -> false))
                .isInstanceOf(ServerException.class)
                .hasMessage("timed out after 20ms waiting for something that never happens");
    }

    @Test
    void failsAtOnceWithItsOutputWhenTheServerEnds() {
        try (ManagedProcess server =
                ManagedProcess.start("short-lived", List.of("sh", "-c", "echo cannot bind >&2; exit 1"))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> Await.until("the server to serve", LONG, server, () -> false))
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("short-lived ended while waiting for the server to serve")
                    .hasMessageContaining("cannot bind");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("long before the deadline")
                    .isLessThan(LONG);
        }
    }
}
