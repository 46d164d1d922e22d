package io.cerberus.micrometer;

import io.cerberus.CerberusMetrics;
import io.cerberus.EngineSwitchEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;

/**
 * Reports a Cerberus client's activity to a Micrometer {@link MeterRegistry}:
 *
 * <ul>
 *   <li>{@code cerberus.lock.acquire} (timer: time to grant or give up; tags {@code engine},
 *       {@code mode}, {@code outcome} = granted, timed_out, failed, interrupted, cancelled)</li>
 *   <li>{@code cerberus.lock.held} (timer: from grant to release; tags {@code engine}, {@code mode})</li>
 *   <li>{@code cerberus.lock.lost} (counter; tags {@code engine}, {@code mode})</li>
 *   <li>{@code cerberus.runs.skipped} (counter of exclusive runs skipped, another instance holding
 *       their lock; tags {@code engine}, {@code name})</li>
 *   <li>{@code cerberus.lock.renewals} (counter of holds; tags {@code engine}, {@code outcome} =
 *       renewed, refused, unreachable)</li>
 *   <li>{@code cerberus.engine.switches} (counter; tags {@code from}, {@code to}, {@code reason} =
 *       manual, failover, failback)</li>
 * </ul>
 *
 * <p>On the class path it is found by every client that sets no metrics, and reports to
 * {@link Metrics#globalRegistry}. To report elsewhere:
 * {@code Cerberus.builder().metrics(new MicrometerMetrics(registry))}.
 */
public final class MicrometerMetrics implements CerberusMetrics {
    private final MeterRegistry registry;

    /** Reports to Micrometer's global registry (what {@link java.util.ServiceLoader} finds). */
    public MicrometerMetrics() {
        this(Metrics.globalRegistry);
    }

    /**
     * @param registry where to report
     */
    public MicrometerMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void acquisition(String engine, String mode, AcquireOutcome outcome, Duration waited) {
        Timer.builder("cerberus.lock.acquire")
                .description("Time to acquire a lock or give up, waiting included")
                .tags("engine", engine, "mode", mode, "outcome", tag(outcome))
                .register(registry)
                .record(waited);
    }

    @Override
    public void release(String engine, String mode, Duration held) {
        Timer.builder("cerberus.lock.held")
                .description("Time a lock was held, from grant to release")
                .tags("engine", engine, "mode", mode)
                .register(registry)
                .record(held);
    }

    @Override
    public void loss(String engine, String mode) {
        Counter.builder("cerberus.lock.lost")
                .description("Leases lost: renewal refused, lease run out, session ended")
                .tags("engine", engine, "mode", mode)
                .register(registry)
                .increment();
    }

    @Override
    public void skippedRun(String engine, String name) {
        Counter.builder("cerberus.runs.skipped")
                .description("Exclusive runs skipped: another instance held their lock")
                .tags("engine", engine, "name", name)
                .register(registry)
                .increment();
    }

    @Override
    public void renewals(String engine, RenewalOutcome outcome, int holds) {
        Counter.builder("cerberus.lock.renewals")
                .description("Renewals of held leases, by outcome")
                .baseUnit("holds")
                .tags("engine", engine, "outcome", tag(outcome))
                .register(registry)
                .increment(holds);
    }

    @Override
    public void engineSwitch(EngineSwitchEvent event) {
        Counter.builder("cerberus.engine.switches")
                .description("Switches of the engine new acquisitions go to")
                .tags("from", event.from(), "to", event.to(), "reason", tag(event.reason()))
                .register(registry)
                .increment();
    }

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public String toString() {
        return "MicrometerMetrics[" + registry.getClass().getSimpleName() + "]";
    }
}
