package io.cerberus.idempotency;

import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.time.Duration;
import java.util.List;

/**
 * How a guard behaves. Immutable; {@link #defaults()} then {@code with...}.
 *
 * @param lease how long an IN_PROGRESS record lives without renewal: a crashed attempt's key is
 *     free again after this (renewed every lease/3 while the operation runs); default 30 s
 * @param whenInProgress what a duplicate does while the first attempt runs; default {@link InProgress#WAIT}: it
 *     waits for the first attempt's result, which is what a caller retrying after a timeout wants
 * @param waitAtMost with {@link InProgress#WAIT}, how long a duplicate waits for the first attempt; default 30 s, the
 *     default lease: by then the first attempt has finished, or crashed and given up its key
 * @param whenStoreDown fail closed (default) or run unguarded when the store cannot be reached
 * @param storeAttempts tries of a store call before the store counts as down (backoff 50 ms, doubling); default 3
 * @param remember exception types whose failure is stored and replayed; any other failure releases the key
 */
public record IdempotencyOptions(
        Duration lease,
        InProgress whenInProgress,
        Duration waitAtMost,
        StoreDown whenStoreDown,
        int storeAttempts,
        List<Class<? extends Throwable>> remember) {

    /** What a duplicate does while the first attempt runs. */
    public enum InProgress {
        /** Throw {@link OperationInProgressException} at once. */
        REJECT,
        /** Wait for the first attempt to complete (then replay) or give up its key (then run), up to {@code waitAtMost}. */
        WAIT
    }

    /** What happens when the store cannot be reached. */
    public enum StoreDown {
        /** Throw {@link IdempotencyStoreUnavailableException}; the operation does not run. */
        FAIL_CLOSED,
        /** Run the operation without the guard; the outcome says {@code UNGUARDED}, and it is logged and counted. */
        FAIL_OPEN
    }

    public IdempotencyOptions {
        Arguments.notNull("lease", lease);
        if (lease.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException(
                    "the idempotency lease must be at least 100ms, was " + Durations.format(lease));
        }
        Arguments.notNull("whenInProgress", whenInProgress);
        Arguments.notNull("waitAtMost", waitAtMost);
        if (waitAtMost.isNegative()) {
            throw new IllegalArgumentException("waitAtMost must not be negative");
        }
        Arguments.notNull("whenStoreDown", whenStoreDown);
        if (storeAttempts < 1 || storeAttempts > 10) {
            throw new IllegalArgumentException("storeAttempts must be 1 to 10, was " + storeAttempts);
        }
        remember = List.copyOf(Arguments.notNull("remember", remember));
    }

    /**
     * @return lease 30 s; a duplicate in progress WAITs up to 30 s for the first attempt's result; FAIL_CLOSED; 3
     *     store attempts; remember no failure
     */
    public static IdempotencyOptions defaults() {
        return new IdempotencyOptions(
                Duration.ofSeconds(30), InProgress.WAIT, Duration.ofSeconds(30), StoreDown.FAIL_CLOSED, 3, List.of());
    }

    public IdempotencyOptions withLease(Duration value) {
        return new IdempotencyOptions(value, whenInProgress, waitAtMost, whenStoreDown, storeAttempts, remember);
    }

    /**
     * @param atMost how long a duplicate waits for the first attempt, while it runs, to complete (then its result is
     *     replayed) or give up its key (then the duplicate runs); {@link OperationInProgressException} after that
     * @return these options, with duplicates in progress waiting
     */
    public IdempotencyOptions waitingWhenInProgress(Duration atMost) {
        return new IdempotencyOptions(lease, InProgress.WAIT, atMost, whenStoreDown, storeAttempts, remember);
    }

    /**
     * @return these options, with a duplicate that finds the first attempt still running rejected at once with
     *     {@link OperationInProgressException} (an HTTP API answering 409, say, or a caller that retries later)
     */
    public IdempotencyOptions rejectingWhenInProgress() {
        return new IdempotencyOptions(lease, InProgress.REJECT, waitAtMost, whenStoreDown, storeAttempts, remember);
    }

    public IdempotencyOptions failingOpen() {
        return new IdempotencyOptions(lease, whenInProgress, waitAtMost, StoreDown.FAIL_OPEN, storeAttempts, remember);
    }

    public IdempotencyOptions withStoreAttempts(int value) {
        return new IdempotencyOptions(lease, whenInProgress, waitAtMost, whenStoreDown, value, remember);
    }

    public IdempotencyOptions remembering(List<Class<? extends Throwable>> failures) {
        return new IdempotencyOptions(lease, whenInProgress, waitAtMost, whenStoreDown, storeAttempts, failures);
    }
}
