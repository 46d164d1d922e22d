package io.cerberus.jdbc;

import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs the engine's statements on borrowed connections: each with a query timeout, retried when
 * the database reports a deadlock or serialization failure, retried once on a fresh connection
 * when a pooled one turns out dead (a restarted server), and failing with
 * {@link EngineUnavailableException} naming the database when it cannot be reached.
 */
final class Db {
    private static final int MAX_RETRIES = 20;
    final ConnectionSource source;
    final Dialect dialect;
    final String describe;
    final Duration timeout;

    Db(ConnectionSource source, Dialect dialect, Duration timeout) {
        this.source = source;
        this.dialect = dialect;
        this.describe = source.describe;
        this.timeout = timeout;
    }

    @FunctionalInterface
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * @param what the operation, for messages
     * @param safeToRepeat whether the work may run again after a connection failed in the middle
     *     of it (its effect, if it had one, is found again)
     * @param work the statements
     * @param <T> the result
     * @return the work's result
     */
    <T> T run(String what, boolean safeToRepeat, Work<T> work) {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean freshTried = false;
        for (int attempt = 0;; attempt++) {
            Connection connection;
            try {
                connection = source.borrow();
            } catch (SQLException e) {
                throw new EngineUnavailableException("could not connect to " + describe + ": " + e.getMessage(), e);
            }
            boolean broken = false;
            try {
                return work.run(connection);
            } catch (SQLException e) {
                broken = SqlErrors.isConnectionFailure(e);
                boolean timeLeft = System.nanoTime() - deadline < 0;
                if (SqlErrors.isRetryable(e) && attempt < MAX_RETRIES && timeLeft) {
                    pause(attempt);
                    continue;
                }
                if (broken) {
                    source.purgeIdle();
                    if (safeToRepeat && !freshTried && timeLeft) {
                        freshTried = true;
                        continue;
                    }
                    throw new EngineUnavailableException(what + " failed on " + describe + ": " + e.getMessage(), e);
                }
                throw new CerberusException(what + " failed on " + describe + ": " + e.getMessage()
                        + " (SQLState " + e.getSQLState() + ", error " + e.getErrorCode() + ")", e);
            } catch (RuntimeException e) {
                broken = true;
                throw e;
            } finally {
                source.giveBack(connection, broken);
            }
        }
    }

    /** @return a statement with the engine's query timeout */
    PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        statement.setQueryTimeout((int) Math.max(1, (timeout.toMillis() + 999) / 1000));
        return statement;
    }

    private static void pause(int attempt) {
        long micros = ThreadLocalRandom.current().nextLong(100, 1000L << Math.min(attempt, 6));
        LockSupport.parkNanos(micros * 1000);
    }
}
