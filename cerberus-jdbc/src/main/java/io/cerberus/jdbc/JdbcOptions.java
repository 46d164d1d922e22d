package io.cerberus.jdbc;

import io.cerberus.EngineOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Settings of a {@code jdbc:} engine that do not belong in its URI. Every setting left unset here
 * falls back to the URI's {@code cerberus.*} parameter, then to its default.
 *
 * <pre>{@code
 * Cerberus.builder().engine("jdbc:postgresql://db/app", JdbcOptions.dataSource(pool).table("app_locks")).build();
 * }</pre>
 *
 * <p>Immutable: every {@code with} method returns a copy.
 */
public final class JdbcOptions implements EngineOptions {
    /** How the engine holds locks. */
    public enum Mode {
        /**
         * One row per lock name in a table: owner, fencing token and an expiry set by the
         * database's clock; holds are leases renewed by the client (the default).
         */
        LEASE_ROW,
        /**
         * The database's own session locks (PostgreSQL advisory locks, MariaDB/MySQL
         * {@code GET_LOCK}, a row lock on H2), held on a dedicated connection per held lock and
         * freed by the database when that connection dies. No fencing tokens.
         */
        SESSION
    }

    private final DataSource dataSource;
    private final String table;
    private final Mode mode;
    private final Boolean createTable;
    private final Duration sessionCheckInterval;

    private JdbcOptions(
            DataSource dataSource, String table, Mode mode, Boolean createTable, Duration sessionCheckInterval) {
        this.dataSource = dataSource;
        this.table = table;
        this.mode = mode;
        this.createTable = createTable;
        this.sessionCheckInterval = sessionCheckInterval;
    }

    /** @return options with nothing set: the URI and the defaults decide */
    public static JdbcOptions defaults() {
        return new JdbcOptions(null, null, null, null, null);
    }

    /**
     * @param dataSource the application's data source (a pool); the engine borrows its own
     *     connections from it, outside any transaction of the application, and keeps one for the
     *     life of each session-mode hold. The URI then only names the database for messages.
     * @return options that take connections from {@code dataSource}
     */
    public static JdbcOptions dataSource(DataSource dataSource) {
        return defaults().withDataSource(dataSource);
    }

    /**
     * @param dataSource the application's data source
     * @return a copy with the data source set
     */
    public JdbcOptions withDataSource(DataSource dataSource) {
        return new JdbcOptions(
                Objects.requireNonNull(dataSource, "dataSource"), table, mode, createTable, sessionCheckInterval);
    }

    /**
     * @param table the lock table, optionally schema-qualified: letters, digits and underscores,
     *     starting with a letter or underscore, at most 63 characters per part (default
     *     {@code cerberus_locks})
     * @return a copy with the table set
     * @throws IllegalArgumentException if the name breaks the rule
     */
    public JdbcOptions table(String table) {
        return new JdbcOptions(dataSource, JdbcTarget.checkTable(table), mode, createTable, sessionCheckInterval);
    }

    /**
     * @param mode lease-row (default) or session
     * @return a copy with the mode set
     */
    public JdbcOptions mode(Mode mode) {
        return new JdbcOptions(
                dataSource, table, Objects.requireNonNull(mode, "mode"), createTable, sessionCheckInterval);
    }

    /**
     * @param createTable whether the engine creates its table when it is missing (default
     *     {@code true}); with {@code false} a missing table fails the engine's start with the DDL
     *     to run in the message
     * @return a copy with the setting
     */
    public JdbcOptions createTable(boolean createTable) {
        return new JdbcOptions(dataSource, table, mode, createTable, sessionCheckInterval);
    }

    /**
     * @param interval how often, in session mode, the connections that hold locks are checked to
     *     be alive, so a session the server dropped is reported lost (default 2 s, at least 100 ms)
     * @return a copy with the interval
     * @throws IllegalArgumentException if the interval is below 100 ms
     */
    public JdbcOptions sessionCheckInterval(Duration interval) {
        return new JdbcOptions(dataSource, table, mode, createTable, JdbcTarget.checkInterval(interval));
    }

    Optional<DataSource> dataSource() {
        return Optional.ofNullable(dataSource);
    }

    Optional<String> table() {
        return Optional.ofNullable(table);
    }

    Optional<Mode> mode() {
        return Optional.ofNullable(mode);
    }

    Optional<Boolean> createTable() {
        return Optional.ofNullable(createTable);
    }

    Optional<Duration> sessionCheckInterval() {
        return Optional.ofNullable(sessionCheckInterval);
    }
}
