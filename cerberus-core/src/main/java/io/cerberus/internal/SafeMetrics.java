package io.cerberus.internal;

import io.cerberus.CerberusMetrics;
import io.cerberus.CerberusMetrics.AcquireOutcome;
import io.cerberus.CerberusMetrics.HoldObserver;
import io.cerberus.CerberusMetrics.WaitObserver;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.LockLostException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Passes events to the application's {@link CerberusMetrics}; a failure there never reaches locking.
 * Its observers ({@link ObservedWait}, {@link ObservedHold}) are told each event at most once.
 */
final class SafeMetrics {
    private static final System.Logger LOG = System.getLogger(SafeMetrics.class.getName());

    private final CerberusMetrics metrics;
    private final AtomicBoolean warned = new AtomicBoolean();

    private SafeMetrics(CerberusMetrics metrics) {
        this.metrics = metrics;
    }

    /** @return the given metrics, else the first found on the class path, else none */
    static SafeMetrics of(CerberusMetrics given) {
        if (given != null) {
            return new SafeMetrics(given);
        }
        try {
            return new SafeMetrics(
                    ServiceLoader.load(CerberusMetrics.class).findFirst().orElse(CerberusMetrics.NONE));
        } catch (java.util.ServiceConfigurationError e) {
            LOG.log(Level.WARNING, "no metrics: the CerberusMetrics found on the class path could not be loaded", e);
            return new SafeMetrics(CerberusMetrics.NONE);
        }
    }

    void acquisition(EngineHandle engine, String mode, CerberusMetrics.AcquireOutcome outcome, long startNanos) {
        run(() -> metrics.acquisition(engine.name(), mode, outcome, Duration.ofNanos(System.nanoTime() - startNanos)));
    }

    void release(EngineHandle engine, String mode, long grantedNanos) {
        run(() -> metrics.release(engine.name(), mode, Duration.ofNanos(System.nanoTime() - grantedNanos)));
    }

    void loss(EngineHandle engine, String mode) {
        run(() -> metrics.loss(engine.name(), mode));
    }

    void skippedRun(EngineHandle engine, String name) {
        run(() -> metrics.skippedRun(engine.name(), name));
    }

    void renewals(EngineHandle engine, CerberusMetrics.RenewalOutcome outcome, int holds) {
        if (holds > 0) {
            run(() -> metrics.renewals(engine.name(), outcome, holds));
        }
    }

    void engineSwitch(EngineSwitchEvent event) {
        run(() -> metrics.engineSwitch(event));
    }

    /**
     * @return the observer of an acquisition beginning now, on the asking thread; {@link ObservedWait#NONE}
     *     when the metrics observe nothing
     */
    ObservedWait acquiring(EngineHandle engine, String mode, String name) {
        if (metrics == CerberusMetrics.NONE) {
            return ObservedWait.NONE;
        }
        try {
            WaitObserver observer = metrics.acquiring(engine.name(), mode, name);
            return observer == null || observer == WaitObserver.NONE
                    ? ObservedWait.NONE
                    : new ObservedWait(this, observer);
        } catch (RuntimeException e) {
            failed(e);
            return ObservedWait.NONE;
        }
    }

    private void run(Runnable call) {
        if (metrics == CerberusMetrics.NONE) {
            return;
        }
        try {
            call.run();
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    private void failed(RuntimeException e) {
        if (warned.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "metrics " + metrics + " failed; later failures are not logged", e);
        }
    }

    /**
     * One acquisition's {@link WaitObserver}, its failures kept from locking. {@link AcquireRun}
     * tells it each event once; not thread-safe (one driver step at a time).
     */
    static class ObservedWait {
        static final ObservedWait NONE = new ObservedWait(null, WaitObserver.NONE);

        private final SafeMetrics safe;
        private final WaitObserver observer;

        private ObservedWait(SafeMetrics safe, WaitObserver observer) {
            this.safe = safe;
            this.observer = observer;
        }

        /** @return the observer's note for the holder description: one word, else nothing */
        String holderNote() {
            if (this == NONE) {
                return "";
            }
            try {
                String note = observer.holderNote();
                return note == null || note.isEmpty() || note.chars().anyMatch(Character::isWhitespace) ? "" : note;
            } catch (RuntimeException e) {
                safe.failed(e);
                return "";
            }
        }

        boolean wantsHolder() {
            if (this == NONE) {
                return false;
            }
            try {
                return observer.wantsHolder();
            } catch (RuntimeException e) {
                safe.failed(e);
                return false;
            }
        }

        void busy(String holder) {
            if (this != NONE) {
                safe.run(() -> observer.busy(holder));
            }
        }

        ObservedHold ended(AcquireOutcome outcome) {
            if (this == NONE) {
                return ObservedHold.NONE;
            }
            try {
                HoldObserver hold = observer.ended(outcome);
                return hold == null || hold == HoldObserver.NONE ? ObservedHold.NONE : new ObservedHold(safe, hold);
            } catch (RuntimeException e) {
                safe.failed(e);
                return ObservedHold.NONE;
            }
        }
    }

    /** One hold's {@link HoldObserver}: told its release or its loss, whichever comes first, once. Thread-safe. */
    static class ObservedHold {
        static final ObservedHold NONE = new ObservedHold(null, HoldObserver.NONE);

        private final SafeMetrics safe;
        private final HoldObserver observer;
        private final AtomicBoolean told = new AtomicBoolean();

        private ObservedHold(SafeMetrics safe, HoldObserver observer) {
            this.safe = safe;
            this.observer = observer;
        }

        void released() {
            if (this != NONE && told.compareAndSet(false, true)) {
                safe.run(observer::released);
            }
        }

        void lost(LockLostException reason) {
            if (this != NONE && told.compareAndSet(false, true)) {
                safe.run(() -> observer.lost(reason));
            }
        }
    }
}
