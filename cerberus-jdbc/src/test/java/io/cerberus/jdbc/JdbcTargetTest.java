package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Our settings come out of driver URLs intact, and database errors are sorted right. */
class JdbcTargetTest {

    @Test
    void ourSettingsAreTakenOutOfTheDriverUrl() {
        JdbcTarget target = JdbcTarget.parse(
                "jdbc:postgresql://h:5432/db?cerberus.mode=session&user=u&password=secret"
                        + "&cerberus.table=app.locks&cerberus.sessionCheckMs=500",
                JdbcOptions.defaults());
        assertThat(target.driverUrl()).isEqualTo("jdbc:postgresql://h:5432/db?user=u&password=secret");
        assertThat(target.describe()).doesNotContain("secret");
        assertThat(target.mode()).isEqualTo(JdbcOptions.Mode.SESSION);
        assertThat(target.table()).isEqualTo("app.locks");
        assertThat(target.sessionCheckInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(target.createTable()).isTrue();

        JdbcTarget h2 = JdbcTarget.parse(
                "jdbc:h2:tcp://h/mem:x;cerberus.createTable=false;DB_CLOSE_DELAY=-1", JdbcOptions.defaults());
        assertThat(h2.driverUrl()).isEqualTo("jdbc:h2:tcp://h/mem:x;DB_CLOSE_DELAY=-1");
        assertThat(h2.createTable()).isFalse();
        assertThat(h2.mode()).isEqualTo(JdbcOptions.Mode.LEASE_ROW);
        assertThat(h2.table()).isEqualTo("cerberus_locks");

        JdbcTarget only = JdbcTarget.parse("jdbc:mariadb://h/db?cerberus.poolSize=3", JdbcOptions.defaults());
        assertThat(only.driverUrl()).isEqualTo("jdbc:mariadb://h/db");
        assertThat(only.poolSize()).isEqualTo(3);
    }

    @Test
    void optionsWinOverTheUri() {
        JdbcTarget target = JdbcTarget.parse(
                "jdbc:postgresql://h/db?cerberus.mode=session&cerberus.table=a",
                JdbcOptions.defaults()
                        .mode(JdbcOptions.Mode.LEASE_ROW)
                        .table("b")
                        .createTable(false));
        assertThat(target.mode()).isEqualTo(JdbcOptions.Mode.LEASE_ROW);
        assertThat(target.table()).isEqualTo("b");
        assertThat(target.createTable()).isFalse();
    }

    @Test
    void badSettingsNameTheRule() {
        assertThatThrownBy(() -> JdbcTarget.parse(
                        "jdbc:postgresql://h/db?cerberus.mode=session&cerberus.mode=lease-row", JdbcOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("given twice");
        assertThatThrownBy(() ->
                        JdbcTarget.parse("jdbc:postgresql://h/db?cerberus.createTable=yes", JdbcOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("true or false");
        assertThatThrownBy(() -> JdbcTarget.parse("jdbc:postgresql://h/db?cerberus.table=1abc", JdbcOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("starting with a letter");
        assertThatThrownBy(() -> JdbcOptions.defaults().table("a".repeat(64)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JdbcOptions.defaults().sessionCheckInterval(Duration.ofMillis(99)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 100ms");
        assertThatThrownBy(
                        () -> JdbcTarget.parse("jdbc:postgresql://h/db?cerberus.poolSize=many", JdbcOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("whole number");
        assertThatThrownBy(() -> SqlDialect.of("Oracle", "jdbc:oracle:x", "cerberus_locks"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("supports PostgreSQL, MariaDB, MySQL and H2");
    }

    @Test
    void errorsAreSortedIntoRetriesAndLostConnections() {
        assertThat(SqlErrors.isRetryable(new SQLException("deadlock detected", "40P01")))
                .isTrue();
        assertThat(SqlErrors.isRetryable(new SQLException("could not serialize access", "40001")))
                .isTrue();
        assertThat(SqlErrors.isRetryable(new SQLException("Deadlock found when trying to get lock", "40001", 1213)))
                .isTrue();
        assertThat(SqlErrors.isRetryable(new SQLException("Lock wait timeout exceeded", "HY000", 1205)))
                .isTrue();
        assertThat(SqlErrors.isRetryable(new SQLException("Timeout trying to lock table", "HYT00", 50200)))
                .isTrue();
        assertThat(SqlErrors.isRetryable(new SQLException("duplicate key", "23505")))
                .as("PostgreSQL's is a real error")
                .isFalse();
        assertThat(SqlErrors.isRetryable(new SQLException("relation does not exist", "42P01")))
                .isFalse();
        assertThat(SqlErrors.isConnectionFailure(new SQLException("Connection refused", "08001")))
                .isTrue();
        assertThat(SqlErrors.isConnectionFailure(new SQLTransientConnectionException("gone")))
                .isTrue();
        assertThat(SqlErrors.isConnectionFailure(
                        new SQLException("terminating connection due to administrator command", "57P01")))
                .isTrue();
        assertThat(SqlErrors.isConnectionFailure(new SQLException("syntax error", "42601")))
                .isFalse();
    }
}
