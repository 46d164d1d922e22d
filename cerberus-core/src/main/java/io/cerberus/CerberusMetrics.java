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

    /**
     * An acquisition begins, before anything is sent: called on the thread that asked (for an
     * async acquisition, the thread that called {@code acquireAsync}), so that a tracer sees the
     * caller's trace. What it returns follows this acquisition to its end and, when granted, its
     * hold. Reentrant acquisitions, which cost nothing, are not observed. Called beside
     * {@link #acquisition}, not instead of it.
     *
     * @param engine the engine name
     * @param mode the lock mode
     * @param name the lock name: unbounded, so a span attribute at most, never a metric tag
     * @return the observer of this acquisition; {@link WaitObserver#NONE} by default
     */
    default WaitObserver acquiring(String engine, String mode, String name) {
        return WaitObserver.NONE;
    }

    /**
     * Follows one acquisition from its start to its end. Its methods are called at most once each,
     * in the order declared, from the threads that drive the acquisition.
     */
    interface WaitObserver {
        /** Observes nothing. */
        WaitObserver NONE = new WaitObserver() {};

        /**
         * @return a note the hold carries in its holder description (what {@code inspect}, the
         *     command line and the actuator show), such as {@code trace=<trace id>/<span id>}; one
         *     word, no spaces; empty for none. Asked once, on the asking thread, when the acquisition begins
         */
        default String holderNote() {
            return "";
        }

        /**
         * @return whether {@link #busy} should be told who holds the lock: the client then reads it
         *     from the engine once, when an acquisition that may wait first finds the lock busy
         *     (one more request to the engine, on engines that can list their holds)
         */
        default boolean wantsHolder() {
            return false;
        }

        /**
         * The lock was busy: told once, at the first busy answer.
         *
         * @param holder who held it, as that holder described itself ({@code pid@host thread},
         *     and its {@link #holderNote()} if it had one); empty when not asked for or not known
         */
        default void busy(String holder) {}

        /**
         * The acquisition ended.
         *
         * @param outcome how
         * @return the observer of the hold when {@code outcome} is {@code GRANTED}; ignored otherwise
         */
        default HoldObserver ended(AcquireOutcome outcome) {
            return HoldObserver.NONE;
        }
    }

    /** Follows one hold from its grant to its release or loss: exactly one of the two is told, once. */
    interface HoldObserver {
        /** Observes nothing. */
        HoldObserver NONE = new HoldObserver() {};

        /** The hold was released by its holder. */
        default void released() {}

        /**
         * The hold was lost.
         *
         * @param reason why
         */
        default void lost(LockLostException reason) {}
    }
}
