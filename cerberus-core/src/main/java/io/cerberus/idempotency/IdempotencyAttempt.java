package io.cerberus.idempotency;

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
