package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void oneGrammarWithAUnit() {
        assertThat(Durations.parsePositive("t", "500us")).isEqualTo(Duration.ofNanos(500_000));
        assertThat(Durations.parsePositive("t", "250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.parsePositive("t", "2s")).isEqualTo(Duration.ofSeconds(2));
        assertThat(Durations.parsePositive("t", "3m")).isEqualTo(Duration.ofMinutes(3));
        assertThat(Durations.parsePositive("t", "8760h")).isEqualTo(Duration.ofDays(365));
        for (String bad : new String[] {"10", "0s", "1.5s", " 1s", "1 s", "-1s", "1d", "8761h", "", "s"}) {
            assertThatThrownBy(() -> Durations.parsePositive("the timeout", bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("the timeout must be a positive duration")
                    .hasMessageContaining("'" + bad + "'");
        }
        assertThatThrownBy(() -> Durations.parsePositive("the timeout", null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void formatsForPeople() {
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.format(Duration.ofMillis(12_500))).isEqualTo("12.5s");
        assertThat(Durations.format(Duration.ofSeconds(30)))
                .as("whole seconds as written")
                .isEqualTo("30s");
        assertThat(Durations.format(Duration.ofSeconds(150))).isEqualTo("2m30s");
    }
}
