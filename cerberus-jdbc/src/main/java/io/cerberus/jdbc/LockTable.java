package io.cerberus.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The lock table of one engine at start, on one connection: made sure of before the engine opens,
 * created (or given a missing column) when it is missing and the engine may create tables, with a
 * message that gives a DBA the DDL otherwise. Two clients creating it at once are both satisfied.
 */
final class LockTable {
    private final Connection connection;
    private final JdbcTarget target;
    private final String table;

    LockTable(Connection connection, JdbcTarget target) {
        this.connection = connection;
        this.target = target;
        this.table = target.table();
    }

    /** Creates the table with {@code ddl} unless it exists. */
    void ensure(String ddl) throws SQLException {
        if (exists(SqlDialect.probeTable(table))) {
            return;
        }
        if (!target.createTable()) {
            throw new IllegalArgumentException("the lock table " + table + " does not exist in " + target.describe()
                    + " and cerberus.createTable is false; create it with: " + ddl);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute(ddl);
        } catch (SQLException e) {
            // two clients creating the table at once: the other one's table is as good
            if (!exists(SqlDialect.probeTable(table))) {
                throw new SQLException(
                        "could not create the lock table " + table + " (" + e.getMessage()
                                + "); a DBA can create it with: " + ddl,
                        e.getSQLState(),
                        e.getErrorCode(),
                        e);
            }
        }
    }

    /**
     * Adds {@code wanted_until} to a lock table created before the column was, unless it has it: a refused acquire marks the row wanted in it, so that a release notifies waiters of
     * other processes (PostgreSQL) and does not hand the lock to a thread of its own process.
     */
    void ensureWantedColumn(String alter) throws SQLException {
        String probe = "SELECT wanted_until FROM " + table + " WHERE 1 = 0";
        if (exists(probe)) {
            return;
        }
        if (!target.createTable()) {
            throw new IllegalArgumentException("the lock table " + table + " in " + target.describe()
                    + " has no column wanted_until (added in this version; cerberus.createTable is false); add it with: "
                    + alter);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute(alter);
        } catch (SQLException e) {
            // two clients adding the column at once: the other one's column is as good
            if (!exists(probe)) {
                throw new SQLException(
                        "could not add the column wanted_until to the lock table " + table + " (" + e.getMessage()
                                + "); a DBA can add it with: " + alter,
                        e.getSQLState(),
                        e.getErrorCode(),
                        e);
            }
        }
    }

    /** @return whether the probe ran, i.e. the table (and the columns the probe names) exists */
    private boolean exists(String probe) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        try (Statement statement = connection.createStatement()) {
            statement.executeQuery(probe).close();
            return true;
        } catch (SQLException e) {
            if (SqlErrors.isConnectionFailure(e)) {
                throw e;
            }
            if (SqlErrors.isPermissionDenied(e)) {
                throw new SQLException(
                        "the database user of " + target.describe() + " may not use the lock table " + table
                                + " (" + e.getMessage() + "); it needs SELECT, INSERT, UPDATE and DELETE on it and on "
                                + table
                                + "_idem (and USAGE on its schema)",
                        e.getSQLState(),
                        e.getErrorCode(),
                        e);
            }
            if (!autoCommit) {
                connection.rollback();
            }
            return false;
        }
    }
}
