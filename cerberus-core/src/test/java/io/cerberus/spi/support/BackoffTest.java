package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
    @Test
    void pausesDoubleUpToTheMaxEachInTheUpperHalfOfItsStep() {
        Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofMillis(80));
        long[] ceilings = {10, 20, 40, 80, 80, 80};
        for (long ceiling : ceilings) {
            Duration pause = backoff.next();
            assertThat(pause).isBetween(Duration.ofMillis(ceiling / 2), Duration.ofMillis(ceiling));
        }
    }

    @Test
    void aBoundLowersOnePausesCeilingWhileTheStepsGoOnDoubling() {
        Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofMillis(80));
        assertThat(backoff.next(Duration.ofMillis(4)))
                .as("under the bound, from its upper half")
                .isBetween(Duration.ofMillis(2), Duration.ofMillis(4));
        assertThat(backoff.next(Duration.ofSeconds(1)))
                .as("the step doubled meanwhile")
                .isBetween(Duration.ofMillis(10), Duration.ofMillis(20));
    }

    @Test
    void refusesANonsenseRange() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofMillis(2), Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
