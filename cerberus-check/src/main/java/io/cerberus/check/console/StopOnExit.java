package io.cerberus.check.console;

import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * Stops what a command started (servers, client processes, a temporary directory) when the JVM
 * exits on a signal — SIGTERM, Ctrl-C — before the command's own {@code finally} could: such an
 * exit runs the shutdown hooks, not the blocks of the running thread. A started server is a process
 * of its own and would outlive us.
 *
 * <p>Things are stopped once, last added first, whether by the hook or by {@link #close()} at the
 * command's end. A thing that fails to stop is reported on stderr and the others are still stopped.
 */
public final class StopOnExit implements AutoCloseable {
    private final Deque<AutoCloseable> started = new ConcurrentLinkedDeque<>();
    private final Thread hook;

    /** @param name the hook thread's name, as a thread dump shows it */
    public StopOnExit(String name) {
        hook = new Thread(this::stopAll, name);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** @return {@code thing}, to be stopped at exit unless the command stops it first (null: nothing) */
    public <T extends AutoCloseable> T add(T thing) {
        if (thing != null) {
            started.push(thing);
        }
        return thing;
    }

    /** Stops everything still registered, last added first, then removes the hook. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            return; // the JVM is exiting on a signal: the hook is stopping them now
        }
        stopAll();
    }

    private void stopAll() {
        for (AutoCloseable thing = started.poll(); thing != null; thing = started.poll()) {
            try {
                thing.close();
            } catch (Exception e) {
                System.err.println("cerberus: could not stop " + thing + ": " + e);
            }
        }
    }
}
