package io.cerberus.spring;

import io.cerberus.Lease;
import java.util.Optional;

/**
 * What an {@link ExclusiveRun @ExclusiveRun} method can ask about its own run, on the thread that
 * runs it: the lease of the run's lock (its fencing token for the job's writes, and whether it is
 * still held), and an assertion for code that must only ever run under it.
 */
public final class ExclusiveRuns {
    private static final ThreadLocal<Lease> CURRENT = new ThreadLocal<>();

    private ExclusiveRuns() {}

    /** @return the lease of the exclusive run this thread is in, or empty outside one */
    public static Optional<Lease> lease() {
        return Optional.ofNullable(CURRENT.get());
    }

    /**
     * Asserts that this thread runs an {@code @ExclusiveRun} method whose lock is still held.
     *
     * @return the run's lease
     * @throws IllegalStateException if not in an exclusive run, or its lock was lost
     */
    public static Lease assertHeld() {
        Lease lease = CURRENT.get();
        if (lease == null) {
            throw new IllegalStateException("not in an @ExclusiveRun method (or not on the thread that runs it)");
        }
        if (!lease.isValid()) {
            throw new IllegalStateException("the lock of this @ExclusiveRun, '" + lease.lockName()
                    + "', is no longer held: another instance may run the job now");
        }
        return lease;
    }

    /** Runs {@code run} with {@code lease} as this thread's current exclusive run. */
    static void within(Lease lease, Runnable run) {
        Lease outer = CURRENT.get();
        CURRENT.set(lease);
        try {
            run.run();
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
    }
}
