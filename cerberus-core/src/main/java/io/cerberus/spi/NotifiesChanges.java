package io.cerberus.spi;

/**
 * An optional ability of a {@link LockEngine}: it learns that a lock may have changed (a release,
 * an expiry, an attempt's turn) without a thread per waiter — a pub/sub message, a watch, a
 * database notification — and can tell the core by a callback. The core's async acquisitions
 * wait on it instead of a thread in {@link LockEngine#awaitChange}; an engine without it is asked
 * again when the core's timer says, by the busy answer's {@code retryWithin}, so every engine has
 * the async API.
 *
 * <p>The callback is a hint, as {@code awaitChange} returning is: it may come for no reason, and
 * the core bounds every wait by its own timer, so a missed change costs time, never safety.
 */
public interface NotifiesChanges {

    /**
     * Calls {@code wake} once when the lock of {@code attempt} may have changed, until the
     * returned watch is cancelled. {@code wake} must be called on a thread of the engine (or the
     * caller's, when the change is already known), never while holding a lock the core could need;
     * it returns at once.
     *
     * @param attempt the waiting attempt, which has asked the engine at least once
     * @param wake what to call
     * @return the watch; the core cancels it when the wait ends either way
     */
    ChangeWatch onChange(Acquisition attempt, Runnable wake);

    /** A registered {@link #onChange} callback. */
    @FunctionalInterface
    interface ChangeWatch {
        /** Stops the callback; cancelling twice, or after it was called, does nothing. */
        void cancel();
    }
}
