package io.cerberus.check.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationsTest {
    @Test
    void acceptsAWholeNumberWithAUnitOrZero() {
        assertThat(Durations.parse("0")).isZero();
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("0s")).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "5", "-1s", "1.5s", "10 s", "10S", "1d", "s", "ms10", "PT10S", "1h30m", "9999999h"})
    void rejectsEverythingElse(String text) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("'" + text + "'");
    }

    @Test
    void formatsForPeople() {
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.format(Duration.ofMillis(3500))).isEqualTo("3.5s");
        assertThat(Durations.format(Duration.ofSeconds(250))).isEqualTo("4m10s");
        assertThat(Durations.format(Duration.ofMinutes(125))).isEqualTo("2h5m");
    }
}
