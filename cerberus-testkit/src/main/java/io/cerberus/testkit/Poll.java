package io.cerberus.testkit;

import io.cerberus.servers.Await;
import io.cerberus.servers.ServerException;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Polls a condition until it holds or a deadline passes: the test's way to wait, never a bare sleep. The polling is
 * {@link Await}'s; a deadline passed fails the test ({@link AssertionError}).
 */
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
        try {
            Await.until(what, timeout, condition);
        } catch (ServerException e) {
            throw new AssertionError(e.getMessage(), e.getCause());
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
