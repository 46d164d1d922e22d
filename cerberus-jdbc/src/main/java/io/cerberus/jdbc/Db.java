package io.cerberus.jdbc;

import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Runs the engine's statements on borrowed connections: each cancelled at the engine's timeout
 * (by the server where the connections carry a {@code statement_timeout}), retried when
 * the database reports a deadlock or serialization failure, retried once on a fresh connection
 * when a pooled one turns out dead (a restarted server), and failing with
 * {@link EngineUnavailableException} naming the database when it cannot be reached.
 */
final class Db {
    private static final int MAX_RETRIES = 20;
    final ConnectionSource source;
    final SqlDialect dialect;
    final String describe;
    final Duration timeout;
    private final boolean serverTimesStatements;
    private final int queryTimeoutSeconds;

    Db(ConnectionSource source, SqlDialect dialect, Duration timeout) {
        this.source = source;
        this.dialect = dialect;
        this.describe = source.describe;
        this.timeout = timeout;
        this.serverTimesStatements = source.serverTimesStatements();
        this.queryTimeoutSeconds = queryTimeoutSeconds(timeout);
    }

    /** @return the engine's timeout in whole seconds, rounded up, at least one: a JDBC query timeout */
    static int queryTimeoutSeconds(Duration timeout) {
        return (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
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
        return run(() -> what, safeToRepeat, work);
    }

    /**
     * @param what the operation, for messages: built only when one is needed
     * @param safeToRepeat as in {@link #run(String, boolean, Work)}
     * @param work the statements
     * @param <T> the result
     * @return the work's result
     */
    <T> T run(Supplier<String> what, boolean safeToRepeat, Work<T> work) {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean freshTried = false;
        for (int attempt = 0; ; attempt++) {
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
                    throw new EngineUnavailableException(
                            what.get() + " failed on " + describe + ": " + e.getMessage(), e);
                }
                throw new CerberusException(
                        what.get() + " failed on " + describe + ": " + e.getMessage() + " (SQLState " + e.getSQLState()
                                + ", error " + e.getErrorCode() + ")",
                        e);
            } catch (RuntimeException e) {
                broken = true;
                throw e;
            } finally {
                source.giveBack(connection, broken);
            }
        }
    }

    /** @return a statement cancelled at the engine's timeout, by the server or by a query timeout */
    PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        return timed(connection.prepareStatement(sql));
    }

    /**
     * Like {@link #prepare}, for a connection that is not the engine's (the caller's, in its transaction): timed by
     * the driver, since the server's statement timeout is set only on the engine's own connections.
     */
    PreparedStatement prepareTimed(Connection connection, String sql) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        statement.setQueryTimeout(queryTimeoutSeconds);
        return dialect.adapt(statement);
    }

    /** Like {@link #prepare}, for a statement whose generated key the caller reads ({@link PreparedStatement#getGeneratedKeys()}). */
    PreparedStatement prepareReturningKey(Connection connection, String sql) throws SQLException {
        return timed(connection.prepareStatement(sql, java.sql.Statement.RETURN_GENERATED_KEYS));
    }

    private PreparedStatement timed(PreparedStatement statement) throws SQLException {
        if (!serverTimesStatements) {
            statement.setQueryTimeout(queryTimeoutSeconds);
        }
        return dialect.adapt(statement);
    }

    /** @return the engine's timeout in whole seconds, at least one: for {@link java.sql.Connection#isValid} and query timeouts */
    int timeoutSeconds() {
        return queryTimeoutSeconds;
    }

    private static void pause(int attempt) {
        long micros = ThreadLocalRandom.current().nextLong(100, 1000L << Math.min(attempt, 6));
        LockSupport.parkNanos(micros * 1000);
    }
}
