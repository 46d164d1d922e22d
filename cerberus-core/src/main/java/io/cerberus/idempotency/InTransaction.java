package io.cerberus.idempotency;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * One attempt's transaction for {@link IdempotencyGuard#executeInTransaction}: a connection of the
 * caller's data source out of auto-commit, the operation on it, the result written on it, the commit.
 *
 * <p>Invariants: the attempt is settled before the connection goes back (completed in the transaction,
 * or failed after its rollback); whenever the commit is not known to have happened the key is freed
 * ({@link IdempotencyAttempt#rolledBack()}), which never frees a completion that did commit; the
 * connection's auto-commit is set back as it was, and it is closed.
 */
final class InTransaction {
    private InTransaction() {}

    static <T> Outcome<T> run(IdempotencyAttempt<T> attempt, DataSource dataSource, TransactionalOperation<T> operation)
            throws Exception {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            if (autoCommit) {
                connection.setAutoCommit(false);
            }
            try {
                return runOn(attempt, connection, operation);
            } finally {
                if (autoCommit) {
                    try {
                        connection.setAutoCommit(true);
                    } catch (SQLException e) {
                        // the connection is closed next: the pool resets or drops it
                    }
                }
            }
        }
    }

    private static <T> Outcome<T> runOn(
            IdempotencyAttempt<T> attempt, Connection connection, TransactionalOperation<T> operation)
            throws Exception {
        Outcome<T> outcome;
        boolean ran = false;
        try {
            T result = operation.run(connection);
            ran = true;
            outcome = attempt.completeIn(connection, result);
        } catch (Exception | Error failure) {
            rollBack(connection, failure);
            if (ran) {
                attempt.rolledBack(); // the completion failed or was refused: nothing of it stays
            } else {
                attempt.fail(failure);
            }
            throw failure;
        }
        try {
            connection.commit();
        } catch (SQLException failure) {
            rollBack(connection, failure);
            attempt.rolledBack(); // frees the key unless the commit did happen
            throw failure;
        }
        return outcome;
    }

    private static void rollBack(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
