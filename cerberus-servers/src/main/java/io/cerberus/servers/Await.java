package io.cerberus.servers;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition with a deadline, checking it again and again with a short pause (1 ms,
 * doubling up to 20 ms): how this module waits for a server to come up, never with a bare sleep.
 * The timeout is used as given; scale it with {@link Timeouts#scaled} where the caller wants that.
 */
public final class Await {
    private static final long LONGEST_PAUSE_MILLIS = 20;

    private Await() {}

    /**
     * Waits until {@code condition} is true.
     *
     * @param what what is awaited, for the failure message ("redis on port 15001 to accept connections")
     * @param timeout the deadline
     * @param condition the condition; an exception it throws ends the wait and passes through
     * @throws ServerException if the deadline passes first, or the thread is interrupted
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        poll(what, timeout, null, condition);
    }

    /**
     * Waits until {@code condition} is true while {@code server} runs: the wait for a server that
     * was just started to serve. It fails at once if the server ends; either failure carries the
     * server's output ({@link ManagedProcess#diagnostics()}).
     *
     * @param what what is awaited, for the failure message
     * @param timeout the deadline
     * @param server the process that must stay alive meanwhile
     * @param condition the condition; an exception it throws ends the wait and passes through
     * @throws ServerException if the server ends or the deadline passes first, or the thread is interrupted
     */
    public static void until(String what, Duration timeout, ManagedProcess server, BooleanSupplier condition) {
        poll(what, timeout, server, condition);
    }

    private static void poll(String what, Duration timeout, ManagedProcess server, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 1;
        while (true) {
            if (server != null && !server.isAlive()) {
                throw new ServerException(server.name() + " ended while waiting for " + what + server.diagnostics());
            }
            if (condition.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ServerException("timed out after " + timeout.toMillis() + "ms waiting for " + what
                        + (server == null ? "" : server.diagnostics()));
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServerException("interrupted waiting for " + what, e);
            }
            pause = Math.min(pause * 2, LONGEST_PAUSE_MILLIS);
        }
    }
}
