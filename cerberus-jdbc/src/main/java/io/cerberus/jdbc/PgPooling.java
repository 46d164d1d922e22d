package io.cerberus.jdbc;

import io.cerberus.EngineUnavailableException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether the database session of a PostgreSQL connection lasts from one transaction to the next
 * (a direct connection, PgBouncer's session pooling) or whether a pooler in front of the server
 * lends the connection's session to other clients between its transactions (PgBouncer's
 * {@code pool_mode=transaction} or {@code statement}, and poolers that work alike). What lives in
 * a session does not survive such a pool: session-level advisory locks stay behind on a server
 * connection that others then use, and a {@code LISTEN} hears nothing.
 *
 * <p><b>The probe.</b> A session's backend process id ({@code pg_backend_pid()}) is fixed while the
 * session lives. The probe reads the connection's id, then opens a second connection, begins a
 * transaction on it (which pins that connection to one server session until it ends) and reads
 * its id, then the first connection's again. A session lent between transactions shows either
 * way: the second connection was given the first one's session, or the first one's next
 * transaction ran in another session. Neither can happen when sessions last, so a finding of
 * transaction pooling is never wrong. A pooler that lends the most recently freed session first
 * (PgBouncer by default) gives the first connection's session to the second at once; one that
 * lends the longest idle first ({@code server_round_robin=1}) moves the first connection to
 * another session, or, with only two idle, gives its session to the second round's connection. A
 * pooler that picked sessions at random could escape both rounds, so "sessions last" is strong
 * evidence, not proof. Statement pooling shows as the refusal of the transaction. Cost, once at
 * start: one or two more connections (kept by the built-in pool), one statement, then four a round.
 */
final class PgPooling {
    /** Rounds of the probe: each pins one more connection, so a session lent away shows in one of them. */
    private static final int ROUNDS = 2;

    private PgPooling() {}

    /** What the probe found. */
    enum Finding {
        /** Each connection keeps its database session: directly connected, or a session-pooling PgBouncer. */
        SESSIONS_LAST,
        /** Sessions are lent to other clients between transactions: PgBouncer's {@code pool_mode=transaction}. */
        TRANSACTION_POOLED,
        /** Every statement may run in another session, and transactions are refused: {@code pool_mode=statement}. */
        STATEMENT_POOLED,
        /** The probe could not open its second connection (an application pool with none to spare). */
        UNKNOWN;

        /** @return whether connections are lent between transactions: session state and {@code LISTEN} do not work */
        boolean pooledByTransaction() {
            return this == TRANSACTION_POOLED || this == STATEMENT_POOLED;
        }
    }

    /**
     * @param connection a connection of {@code source}, in auto-commit mode
     * @param source where the probe's second connections come from; they go back to it
     * @return what the probe found
     * @throws SQLException if a statement on {@code connection} fails
     */
    static Finding probe(Connection connection, ConnectionSource source) throws SQLException {
        long first = backendPid(connection);
        List<Connection> pinned = new ArrayList<>();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                Connection other;
                try {
                    other = source.dedicated();
                } catch (SQLException | EngineUnavailableException e) {
                    return Finding.UNKNOWN;
                }
                pinned.add(other);
                long others;
                try {
                    execute(other, "BEGIN");
                    others = backendPid(other);
                } catch (SQLException e) {
                    if (refusedByStatementPooling(e)) {
                        return Finding.STATEMENT_POOLED;
                    }
                    throw e;
                }
                if (others == first || backendPid(connection) != first) {
                    return Finding.TRANSACTION_POOLED;
                }
            }
            return Finding.SESSIONS_LAST;
        } finally {
            for (Connection other : pinned) {
                source.adopt(endTransaction(other));
            }
        }
    }

    private static long backendPid(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT pg_backend_pid()")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    /** PgBouncer's answer to a transaction in statement pooling (SQLState 08P01; it then closes the connection). */
    private static boolean refusedByStatementPooling(SQLException e) {
        return e.getMessage() != null && e.getMessage().contains("statement pooling");
    }

    /**
     * The transactions are begun and ended by statements, with the connection left in auto-commit
     * mode: the driver (pgjdbc) prepares its own {@code BEGIN} on the server as a named statement,
     * which through transaction pooling may meet another client's statement of that name in the
     * session it is lent ({@code prepared statement "S_1" already exists}).
     */
    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** @return the connection with its transaction ended, or null when that failed (it is closed) */
    private static Connection endTransaction(Connection connection) {
        try {
            execute(connection, "ROLLBACK");
            return connection;
        } catch (SQLException | RuntimeException e) {
            ConnectionSource.closeQuietly(connection);
            return null;
        }
    }
}
