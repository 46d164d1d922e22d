package io.cerberus.idempotency;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One call of a guarded operation, for code that cannot hand the guard a callable (a message
 * listener, a filter around a request): {@link IdempotencyGuard#begin} claims the key, the caller
 * runs the work if {@link #mustRun()} says so, then reports {@link #complete(Object)} or
 * {@link #fail(Throwable)}. Closing an attempt that was neither completed nor failed releases the
 * key, as a failure would (use try-with-resources). While the attempt is open its lease is renewed.
 * Not thread-safe: one attempt belongs to one call.
 *
 * <pre>{@code
 * try (IdempotencyAttempt<String> attempt = guard.begin(key, Duration.ofDays(1), ResultCodec.STRING)) {
 *     if (!attempt.mustRun()) {
 *         return attempt.replayed();
 *     }
 *     String receipt = payments.charge(body);
 *     attempt.complete(receipt);
 *     return receipt;
 * }
 * }</pre>
 *
 * @param <T> the result type
 */
public final class IdempotencyAttempt<T> implements AutoCloseable {
    /** Completes, fails and releases an attempt in its guard. */
    interface Settlement<T> {
        Outcome<T> complete(T result);

        void completeNotKept(String why);

        void fail(Throwable error, boolean remember);

        void release();

        /** @return whether {@link #completeIn} may be called: the store keeps its records in a SQL database */
        boolean completesInTransactions();

        Outcome<T> completeIn(Connection connection, T result) throws SQLException;

        void failIn(Connection connection, Throwable error) throws SQLException;

        void completeNotKeptIn(Connection connection, String why) throws SQLException;
    }

    private final Outcome.Status status;
    private final T replayed;
    private final Settlement<T> settlement;
    private boolean settled;

    private IdempotencyAttempt(Outcome.Status status, T replayed, Settlement<T> settlement) {
        this.status = status;
        this.replayed = replayed;
        this.settlement = settlement;
        this.settled = settlement == null;
    }

    static <T> IdempotencyAttempt<T> owned(Outcome.Status status, Settlement<T> settlement) {
        return new IdempotencyAttempt<>(status, null, settlement);
    }

    static <T> IdempotencyAttempt<T> replay(T value) {
        return new IdempotencyAttempt<>(Outcome.Status.REPLAYED, value, null);
    }

    /**
     * @return true if the caller must run the operation now and then call {@link #complete} or
     *     {@link #fail}: this attempt owns the key, or the store is down and the guard fails open
     */
    public boolean mustRun() {
        return status != Outcome.Status.REPLAYED;
    }

    /** @return EXECUTED (this attempt owns the key), REPLAYED, or UNGUARDED (store down, fail-open) */
    public Outcome.Status status() {
        return status;
    }

    /**
     * @return the first attempt's result
     * @throws IllegalStateException if this attempt must run the operation itself
     */
    public T replayed() {
        if (mustRun()) {
            throw new IllegalStateException(
                    "this attempt owns its key: run the operation and complete it; nothing was replayed");
        }
        return replayed;
    }

    /**
     * Stores the result for duplicates (for the retention given to {@code begin}).
     *
     * @return the result, with the status of this attempt
     * @throws IdempotencyCompletionException if the result could not be stored (the store failed,
     *     or the lease ran out and another attempt may have taken the key)
     * @throws IllegalStateException if the attempt was replayed or already settled
     */
    public Outcome<T> complete(T result) {
        settle("complete");
        return settlement.complete(result);
    }

    /**
     * Stores the result in the caller's transaction on {@code connection}, so that it commits if and
     * only if the operation's effect commits: exactly once, even when the process dies between the two.
     * The connection must be one to the database of the guard's JDBC engine, in a transaction (not in
     * auto-commit mode), and the caller commits or rolls it back afterwards; the lease is no longer
     * renewed from here. After a rollback (or a commit that failed), call {@link #rolledBack()}: the
     * key is free again at once instead of after the lease. See docs/IDEMPOTENCY.md, "Exactly once with
     * your data", for the isolation levels this works under.
     *
     * @return the result, with the status of this attempt
     * @throws SQLException as the database reports a failure: roll the transaction back
     * @throws IdempotencyCompletionException if nothing could be stored: the lease ran out and another
     *     attempt took the key, or the result could not be encoded; roll the transaction back
     * @throws IllegalStateException if the guard's store keeps its records apart from SQL databases
     *     (nothing was settled), if the connection cannot see this attempt's claim (another database,
     *     or a snapshot taken before the claim; nothing was stored), or if the attempt was replayed or
     *     already settled
     */
    public Outcome<T> completeIn(Connection connection, T result) throws SQLException {
        checkJoins(connection, "complete(result)");
        settle("complete");
        return settlement.completeIn(connection, result);
    }

    /**
     * Like {@link #fail(Throwable, boolean) fail(error, true)}, in the caller's transaction as {@link #completeIn}:
     * the operation failed, but its transaction commits all the same (a rollback rule that keeps the effect), so the
     * failure is stored on {@code connection} and commits with the effect; duplicates then get
     * {@link ReplayedFailureException}. After a rollback, call {@link #rolledBack()}.
     *
     * @throws SQLException as the database reports a failure: roll the transaction back
     * @throws IdempotencyCompletionException if the lease ran out and another attempt took the key (nothing stored)
     * @throws IllegalStateException as {@link #completeIn} throws it
     */
    public void failIn(Connection connection, Throwable error) throws SQLException {
        if (error == null) {
            throw new IllegalArgumentException("the error must not be null");
        }
        checkJoins(connection, "fail(error, true)");
        settle("fail");
        settlement.failIn(connection, error);
    }

    /**
     * Like {@link #completeNotKept(String)}, in the caller's transaction as {@link #completeIn}: the record that says
     * "ran, result not kept" commits with the effect. After a rollback, call {@link #rolledBack()}.
     *
     * @throws SQLException as the database reports a failure: roll the transaction back
     * @throws IdempotencyCompletionException if the lease ran out and another attempt took the key (nothing stored)
     * @throws IllegalStateException as {@link #completeIn} throws it
     */
    public void completeNotKeptIn(Connection connection, String why) throws SQLException {
        if (why == null || why.isEmpty()) {
            throw new IllegalArgumentException("the reason must not be empty");
        }
        checkJoins(connection, "completeNotKept(why)");
        settle("complete");
        settlement.completeNotKeptIn(connection, why);
    }

    private void checkJoins(Connection connection, String instead) {
        if (connection == null) {
            throw new IllegalArgumentException("the connection must not be null");
        }
        if (settlement != null && !settlement.completesInTransactions()) {
            throw new IllegalStateException("this guard's engine keeps its idempotency records apart from your"
                    + " database, so a completion cannot join your transaction: use a guard of a JDBC engine on that"
                    + " database, or " + instead + " after the commit");
        }
    }

    /**
     * Reports that the transaction this attempt was completed in ({@link #completeIn}) rolled back, or
     * that its commit failed and its outcome is unknown: frees the key now, unless the completion did
     * commit (a completed record is never freed, so this is safe when in doubt). On an attempt neither
     * completed nor failed it releases the key, as {@link #close()}; on a replayed one it does nothing.
     */
    public void rolledBack() {
        if (settlement != null) {
            settled = true;
            settlement.release();
        }
    }

    /**
     * Reports that the operation took effect but its result is not to be kept (too large for the
     * caller's own limit, say): duplicates get {@link ResultNotKeptException} with this reason for
     * the retention given to {@code begin}, and do not run the operation again.
     *
     * @param why why the result is not kept, for the duplicates' message
     * @throws IdempotencyCompletionException if the record could not be stored
     * @throws IllegalStateException if the attempt was replayed or already settled
     */
    public void completeNotKept(String why) {
        if (why == null || why.isEmpty()) {
            throw new IllegalArgumentException("the reason must not be empty");
        }
        settle("complete");
        settlement.completeNotKept(why);
    }

    /**
     * Reports that the operation failed: the key is released so the operation may be retried,
     * unless the error's type is remembered by the guard's options (then it is stored and replayed).
     *
     * @throws IllegalStateException if the attempt was replayed or already settled
     */
    public void fail(Throwable error) {
        fail(error, false);
    }

    /**
     * Reports that the operation failed, and whether its effect took place all the same (a
     * transaction committed in spite of the error, say): then the failure is stored and replayed
     * to duplicates as {@link ReplayedFailureException}, whatever the guard remembers; else as
     * {@link #fail(Throwable)}.
     *
     * @param error what the operation threw
     * @param tookEffect true to store the failure for duplicates
     * @throws IllegalStateException if the attempt was replayed or already settled
     */
    public void fail(Throwable error, boolean tookEffect) {
        if (error == null) {
            throw new IllegalArgumentException("the error must not be null");
        }
        settle("fail");
        settlement.fail(error, tookEffect);
    }

    private void settle(String what) {
        if (settlement == null) {
            throw new IllegalStateException("cannot " + what + " a replayed attempt: the operation must not run");
        }
        if (settled) {
            throw new IllegalStateException("cannot " + what + " an attempt twice: it was already completed or failed");
        }
        settled = true;
    }

    /** Releases the key if the attempt was neither completed nor failed; otherwise does nothing. */
    @Override
    public void close() {
        if (!settled) {
            settled = true;
            settlement.release();
        }
    }
}
