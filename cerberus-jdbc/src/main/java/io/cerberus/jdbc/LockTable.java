package io.cerberus.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.LongFunction;

/**
 * The lock table of one engine at start, on one connection: made sure of before the engine opens,
 * created (or given a missing column, or its fence sequence) when it is missing and the engine may
 * create tables, with a message that gives a DBA the DDL otherwise. Two clients creating it at once
 * are both satisfied.
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
        String probe = SqlDialect.probeTable(table);
        if (exists(probe)) {
            return;
        }
        make(
                probe,
                ddl,
                "the lock table " + table + " does not exist in " + target.describe()
                        + " and cerberus.createTable is false; create it with: " + ddl,
                "could not create the lock table " + table,
                "create it");
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
        make(
                probe,
                alter,
                "the lock table " + table + " in " + target.describe()
                        + " has no column wanted_until (added in this version; cerberus.createTable is false); add it with: "
                        + alter,
                "could not add the column wanted_until to the lock table " + table,
                "add it");
    }

    /**
     * Creates the sequence fences are drawn from unless it exists, starting above the largest fence in the table
     * (rows an earlier version kept, with fences counted per name), so no name's token goes backwards.
     *
     * @param sequence the sequence's name
     * @param probe a statement that fails when the sequence is missing (it may draw a value)
     * @param ddl the DDL of the sequence, given its first value
     */
    void ensureFenceSequence(String sequence, String probe, LongFunction<String> ddl) throws SQLException {
        if (exists(probe)) {
            return;
        }
        String create = ddl.apply(largestFence() + 1);
        make(
                probe,
                create,
                "the lock table " + table + " in " + target.describe() + " has no fence sequence " + sequence
                        + " (fencing tokens are drawn from it; cerberus.createTable is false); with every client of an"
                        + " earlier version stopped, create it above the table's largest fence with: " + create,
                "could not create the fence sequence " + sequence + " of the lock table " + table,
                "create it");
    }

    /**
     * Runs {@code ddl} to make what {@code probe} found missing, or refuses when the engine may not create
     * tables. A failure while another client made the same thing at the same moment counts as done: the
     * other one's is as good.
     *
     * @param refusal the message when the engine may not create tables
     * @param failure what could not be done, for the message of a failure
     * @param fix what a DBA does with the DDL ("create it", "add it")
     */
    private void make(String probe, String ddl, String refusal, String failure, String fix) throws SQLException {
        if (!target.createTable()) {
            throw new IllegalArgumentException(refusal);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute(ddl);
        } catch (SQLException e) {
            if (!exists(probe)) {
                throw new SQLException(
                        failure + " (" + e.getMessage() + "); a DBA can " + fix + " with: " + ddl,
                        e.getSQLState(),
                        e.getErrorCode(),
                        e);
            }
        }
    }

    /** @return the largest fence in the table, 0 when it is empty */
    private long largestFence() throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT COALESCE(MAX(fence), 0) FROM " + table)) {
            return rows.next() ? rows.getLong(1) : 0;
        }
    }

    /** @return the server's version, as {@code SELECT VERSION()} gives it */
    String serverVersion() throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT VERSION()")) {
            return rows.next() ? rows.getString(1) : "";
        }
    }

    /** @return the engine's URI without passwords, for messages */
    String describe() {
        return target.describe();
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
