package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConnectionSourceTest {

    @Test
    void theServerCancelsAStatementBeforeTheNetworkTimeoutGivesUpOnTheConnection() {
        assertThat(ConnectionSource.statementTimeout(Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(750));
        assertThat(ConnectionSource.statementTimeout(Duration.ofSeconds(10))).as("at most 1 s short").isEqualTo(Duration.ofSeconds(9));
        assertThat(ConnectionSource.statementTimeout(Duration.ofMillis(2))).isEqualTo(Duration.ofMillis(1));
        assertThat(ConnectionSource.statementTimeout(Duration.ofMillis(1))).as("never zero, which would mean no timeout")
                .isEqualTo(Duration.ofMillis(1));
    }
}
