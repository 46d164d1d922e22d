package io.cerberus.spi;

/**
 * Given to an engine at open: the engine calls it when it learns by itself that holds are gone
 * (a session expired, a connection that carried session locks died), so the core can mark their
 * leases lost at once instead of at the next renewal. Thread-safe; never blocks.
 */
@FunctionalInterface
public interface LossReporter {
    /**
     * @param token the token of the lost acquisition
     * @param reason why, for the holder's {@link io.cerberus.LockLostException}
     */
    void lost(String token, String reason);

    /**
     * The engine cannot vouch for a hold for now (its connection is down, its session may still
     * live): {@link io.cerberus.Lease#isValid()} is false until {@link #confirmed} or {@link #lost}.
     *
     * @param token the token of the acquisition
     * @param reason why, for the log
     */
    default void uncertain(String token, String reason) {}

    /**
     * A hold reported {@link #uncertain} is known to be held again (the session survived).
     *
     * @param token the token of the acquisition
     */
    default void confirmed(String token) {}
}
