package io.cerberus.internal;

import java.time.Duration;

/**
 * One call to acquire a lock, as the acquire loop reads it: which lock, the lease, how long to wait
 * from when, and how the hold behaves. Made once per call; the loop's attempts (one per engine and
 * per late grant given back) all answer to it.
 *
 * @param view the lock and its mode
 * @param lease the lease each attempt asks for
 * @param renewed whether the hold is renewed while held (false for an explicit lease)
 * @param waitNanos how long the caller waits, from {@code start}; negative waits for ever, 0 asks once
 * @param interruptible whether an interrupt ends the wait (else it is kept for the caller)
 * @param threadBound whether the hold belongs to the calling thread (reentrancy, {@code unlock()})
 * @param start when the call started ({@link System#nanoTime()})
 * @param holder who the attempts name as their holder ({@code inspect} shows it); null for the
 *     calling thread's description
 */
record AcquireRequest(
        LockView view,
        Duration lease,
        boolean renewed,
        long waitNanos,
        boolean interruptible,
        boolean threadBound,
        long start,
        String holder) {

    /** @return a request starting now */
    static AcquireRequest startingNow(
            LockView view,
            Duration lease,
            boolean renewed,
            long waitNanos,
            boolean interruptible,
            boolean threadBound) {
        return new AcquireRequest(view, lease, renewed, waitNanos, interruptible, threadBound, System.nanoTime(), null);
    }

    /** @return this request for the extra hold on an engine in its lock-delay, which no thread owns */
    AcquireRequest lockDelayHold() {
        return new AcquireRequest(view, lease, renewed, waitNanos, interruptible, false, start, holder);
    }
}
