package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumSet;
import java.util.Set;

/**
 * Opens {@code jdbc:} engines. See {@link JdbcTarget} for the URI, {@link JdbcOptions} for the
 * settings, {@link LeaseRowEngine} and {@link SessionEngine} for the two modes.
 */
public final class JdbcEngineProvider implements EngineProvider {

    /** Needed by {@link java.util.ServiceLoader}. */
    public JdbcEngineProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("jdbc");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        Set<Capability> all = EnumSet.copyOf(LeaseRowEngine.CAPABILITIES);
        all.addAll(SessionEngine.CAPABILITIES);
        return all;
    }

    @Override
    public LockEngine open(EngineContext context) {
        JdbcOptions options = context.option(JdbcOptions.class, Set.of(JdbcOptions.class)).orElseGet(JdbcOptions::defaults);
        JdbcTarget target = JdbcTarget.parse(context.uri(), options);
        ConnectionSource source = ConnectionSource.of(target, options, context.connectTimeout());
        try {
            Dialect dialect = prepare(source, target);
            Db db = new Db(source, dialect, context.connectTimeout());
            if (target.mode() == JdbcOptions.Mode.SESSION) {
                SessionEngine engine = new SessionEngine(db, target.table(), target.createTable(), target.sessionCheckInterval(), context.lossReporter());
                engine.tableReady();
                return engine;
            }
            return new LeaseRowEngine(db, target.table(), target.createTable());
        } catch (RuntimeException e) {
            source.close();
            throw e;
        }
    }

    /** Connects once: finds the dialect and makes sure the table is there. */
    private static Dialect prepare(ConnectionSource source, JdbcTarget target) {
        Connection connection;
        try {
            connection = source.borrow();
        } catch (SQLException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("No suitable driver")) {
                throw new IllegalArgumentException("no JDBC driver on the class path accepts " + target.describe()
                        + "; add the database's driver (org.postgresql:postgresql, org.mariadb.jdbc:mariadb-java-client, "
                        + "com.h2database:h2)", e);
            }
            throw new EngineUnavailableException("could not connect to " + target.describe() + ": " + e.getMessage(), e);
        }
        boolean broken = false;
        try {
            Dialect dialect = Dialect.of(connection.getMetaData().getDatabaseProductName(), target.describe());
            boolean needsTable = target.mode() == JdbcOptions.Mode.LEASE_ROW || dialect == Dialect.H2;
            if (needsTable) {
                ensureTable(connection, dialect, target);
            }
            if (dialect.usesWantedColumn() && target.mode() == JdbcOptions.Mode.LEASE_ROW) {
                ensureWantedColumn(connection, dialect, target);
            }
            return dialect;
        } catch (SQLException e) {
            broken = SqlErrors.isConnectionFailure(e);
            if (broken) {
                throw new EngineUnavailableException("could not prepare " + target.describe() + ": " + e.getMessage(), e);
            }
            throw new CerberusException("could not prepare " + target.describe() + ": " + e.getMessage(), e);
        } finally {
            source.giveBack(connection, broken);
        }
    }

    private static void ensureTable(Connection connection, Dialect dialect, JdbcTarget target) throws SQLException {
        String ddl = dialect.createTable(target.table());
        if (exists(connection, dialect, target.table(), target)) {
            return;
        }
        if (!target.createTable()) {
            throw new IllegalArgumentException("the lock table " + target.table() + " does not exist in " + target.describe()
                    + " and cerberus.createTable is false; create it with: " + ddl);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute(ddl);
        } catch (SQLException e) {
            // two clients creating the table at once: the other one's table is as good
            if (!exists(connection, dialect, target.table(), target)) {
                throw new SQLException("could not create the lock table " + target.table() + " (" + e.getMessage()
                        + "); a DBA can create it with: " + ddl, e.getSQLState(), e.getErrorCode(), e);
            }
        }
    }

    /**
     * Adds {@code wanted_until} to a PostgreSQL, MariaDB or MySQL lock table created before the
     * column was: a refused acquire marks the row wanted in it, so that a release notifies waiters
     * of other processes (PostgreSQL) and does not hand the lock to a thread of its own process.
     */
    private static void ensureWantedColumn(Connection connection, Dialect dialect, JdbcTarget target) throws SQLException {
        String table = target.table();
        String alter = dialect.addWantedColumn(table);
        if (exists(connection, dialect.probeWantedColumn(table), table, target)) {
            return;
        }
        if (!target.createTable()) {
            throw new IllegalArgumentException("the lock table " + table + " in " + target.describe()
                    + " has no column wanted_until (added in this version; cerberus.createTable is false); add it with: " + alter);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute(alter);
        } catch (SQLException e) {
            // two clients adding the column at once: the other one's column is as good
            if (!exists(connection, dialect.probeWantedColumn(table), table, target)) {
                throw new SQLException("could not add the column wanted_until to the lock table " + table + " (" + e.getMessage()
                        + "); a DBA can add it with: " + alter, e.getSQLState(), e.getErrorCode(), e);
            }
        }
    }

    private static boolean exists(Connection connection, Dialect dialect, String table, JdbcTarget target) throws SQLException {
        return exists(connection, dialect.probeTable(table), table, target);
    }

    /** @return whether the probe ran, i.e. the table (and the columns the probe names) exists */
    private static boolean exists(Connection connection, String probe, String table, JdbcTarget target) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        try (Statement statement = connection.createStatement()) {
            statement.executeQuery(probe).close();
            return true;
        } catch (SQLException e) {
            if (SqlErrors.isConnectionFailure(e)) {
                throw e;
            }
            if (SqlErrors.isPermissionDenied(e)) {
                throw new SQLException("the database user of " + target.describe() + " may not use the lock table " + table
                        + " (" + e.getMessage() + "); it needs SELECT, INSERT, UPDATE and DELETE on it and on " + table
                        + "_idem (and USAGE on its schema)", e.getSQLState(), e.getErrorCode(), e);
            }
            if (!autoCommit) {
                connection.rollback();
            }
            return false;
        }
    }
}
