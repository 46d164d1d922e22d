package io.cerberus;

import java.time.Duration;

/**
 * Receives what a client does, for metrics. Every method has an empty default. Set one with
 * {@link CerberusBuilder#metrics(CerberusMetrics)}; without one, the client uses the first
 * implementation found on the class path by {@link java.util.ServiceLoader} (the
 * {@code cerberus-micrometer} module registers one that reports to Micrometer's global
 * registry), else none. Called on the threads that acquire, release and renew: implementations
 * must be quick and thread-safe. An exception they throw is logged once and otherwise ignored.
 */
public interface CerberusMetrics {

    /** No metrics. */
    CerberusMetrics NONE = new CerberusMetrics() {};

    /** How an acquisition ended. */
    enum AcquireOutcome {
        /** The lock was granted. */
        GRANTED,
        /** The wait ran out while the lock was busy ({@code tryLock} false, {@link LockTimeoutException}). */
        TIMED_OUT,
        /** The engine failed ({@link EngineUnavailableException}) or refused the request. */
        FAILED,
        /** The waiting thread was interrupted. */
        INTERRUPTED,
        /** The future of an async acquisition was cancelled (or completed by its caller) while it waited. */
        CANCELLED
    }

    /** How the renewal of a hold ended. */
    enum RenewalOutcome {
        /** The engine extended the lease. */
        RENEWED,
        /** The engine refused: the hold was gone; the lease is lost. */
        REFUSED,
        /** The engine could not be reached; the renewal is retried while the lease lasts. */
        UNREACHABLE
    }

    /**
     * An acquisition ended (reentrant acquisitions, which cost nothing, are not reported).
     *
     * @param engine the engine name
     * @param mode {@code exclusive}, {@code fair}, {@code read} or {@code write}
     * @param outcome how it ended
     * @param waited how long it took, waiting included
     */
    default void acquisition(String engine, String mode, AcquireOutcome outcome, Duration waited) {}

    /**
     * A hold was released (or closed after it was lost).
     *
     * @param engine the engine name
     * @param mode the lock mode
     * @param held how long it was held, from the grant
     */
    default void release(String engine, String mode, Duration held) {}

    /**
     * A lease was lost: refused renewal, lease run out, session ended, or gone at release.
     *
     * @param engine the engine name
     * @param mode the lock mode
     */
    default void loss(String engine, String mode) {}

    /**
     * One batch of renewals on one engine ended.
     *
     * @param engine the engine name
     * @param outcome what the engine answered
     * @param holds how many holds had this outcome
     */
    default void renewals(String engine, RenewalOutcome outcome, int holds) {}

    /**
     * An exclusive run ({@link Cerberus#runExclusively}) was skipped: another instance held its lock.
     *
     * @param engine the engine name
     * @param name the run's lock name
     */
    default void skippedRun(String engine, String name) {}

    /**
     * The client switched engines.
     *
     * @param event the switch
     */
    default void engineSwitch(EngineSwitchEvent event) {}
}
