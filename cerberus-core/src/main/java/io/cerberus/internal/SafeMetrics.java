package io.cerberus.internal;

import io.cerberus.CerberusMetrics;
import io.cerberus.EngineSwitchEvent;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;

/** Passes events to the application's {@link CerberusMetrics}; a failure there never reaches locking. */
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

    private void run(Runnable call) {
        if (metrics == CerberusMetrics.NONE) {
            return;
        }
        try {
            call.run();
        } catch (RuntimeException e) {
            if (warned.compareAndSet(false, true)) {
                LOG.log(Level.WARNING, "metrics " + metrics + " failed; later failures are not logged", e);
            }
        }
    }
}
