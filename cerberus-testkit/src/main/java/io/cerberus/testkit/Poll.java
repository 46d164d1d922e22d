package io.cerberus.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or a deadline passes: the test's way to wait, never a bare sleep. */
public final class Poll {
    private Poll() {}

    /**
     * Waits until {@code condition} is true.
     *
     * @param what what is awaited, for the failure message
     * @param timeout the deadline (already scaled, or scaled here with {@link TestTimes})
     * @param condition the condition
     * @throws AssertionError if the deadline passes first
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 1;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + "ms waiting for " + what);
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
            pause = Math.min(pause * 2, 20);
        }
    }

    /**
     * Waits until a thread is blocked waiting (in a lock, condition or sleep).
     *
     * @param thread the thread
     * @param timeout the deadline
     */
    public static void untilWaiting(Thread thread, Duration timeout) {
        until("thread " + thread.getName() + " to wait", timeout, () -> {
            Thread.State state = thread.getState();
            return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
        });
    }
}
