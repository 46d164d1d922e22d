package io.cerberus.idempotency;

import java.sql.Connection;

/**
 * An operation that makes its changes on the connection it is given, in a transaction the guard
 * commits together with the operation's result ({@link IdempotencyGuard#executeInTransaction}).
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface TransactionalOperation<T> {
    /**
     * @param connection in a transaction; the operation neither commits, rolls back nor closes it
     * @return the result, stored in the same transaction and replayed to duplicates
     * @throws Exception any failure: the transaction rolls back and the key is freed (or the failure
     *     remembered, as the guard's options say)
     */
    T run(Connection connection) throws Exception;
}
