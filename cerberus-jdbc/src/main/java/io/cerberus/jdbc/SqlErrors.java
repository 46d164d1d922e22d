package io.cerberus.jdbc;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;

/** Sorts the database's errors: worth a retry, a lost connection, or a real failure. */
final class SqlErrors {
    private SqlErrors() {}

    /**
     * @param e an error
     * @return whether the statement failed only because of another transaction (deadlock,
     *     serialization failure, lock wait, a concurrent insert of the same key) and may simply be
     *     run again
     */
    static boolean isRetryable(SQLException e) {
        for (SQLException x = e; x != null; x = x.getNextException()) {
            String state = x.getSQLState() == null ? "" : x.getSQLState();
            int code = x.getErrorCode();
            if (state.equals("40001")
                    || state.equals("40P01")
                    || code == 1213
                    || code == 1205
                    || code == 40001
                    || code == 50200
                    || code == 90131
                    || (code == 23505 && state.equals("23505"))) {
                return true;
            }
            if (x.getNextException() == x) {
                break;
            }
        }
        return false;
    }

    /**
     * @param e an error
     * @return whether the connection itself failed (the server is down, the network cut, a
     *     timeout), so the connection is not reused
     */
    static boolean isConnectionFailure(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        return state.startsWith("08")
                || e instanceof SQLTransientConnectionException
                || e instanceof SQLNonTransientConnectionException
                || e instanceof SQLRecoverableException
                || e instanceof SQLTimeoutException
                || state.equals("57P01")
                || state.equals("57P02")
                || state.equals("57P03")
                || state.equals("HYT00")
                || state.equals("HYT01");
    }

    /**
     * @return whether the database refused the statement for lack of privileges (PostgreSQL
     *     42501, MariaDB/MySQL 1142/1143/1044, H2 90096): not a missing table, and not worth a retry
     */
    static boolean isPermissionDenied(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        int code = e.getErrorCode();
        return state.equals("42501") || code == 1142 || code == 1143 || code == 1044 || code == 90096;
    }
}
