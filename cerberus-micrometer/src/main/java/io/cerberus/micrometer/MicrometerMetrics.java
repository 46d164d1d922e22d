package io.cerberus.micrometer;

import io.cerberus.CerberusMetrics;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.LockLostException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reports a Cerberus client's activity to a Micrometer {@link MeterRegistry}: the timers
 * {@code cerberus.lock.acquire} (a percentile histogram) and {@code cerberus.lock.held}, the gauge
 * {@code cerberus.lock.waiting}, the counters {@code cerberus.lock.lost}, {@code cerberus.runs.skipped},
 * {@code cerberus.lock.renewals} and {@code cerberus.engine.switches}. Tags are bounded: engine,
 * mode, outcome, reason; a lock name only on skipped runs, whose names the application fixes.
 *
 * <p>Given an {@link ObservationRegistry}, each acquisition is also an observation
 * {@code cerberus.lock.wait} and each hold one {@code cerberus.lock.hold}: spans in an application
 * with tracing, children of what the caller was doing. Their high-cardinality values name the
 * lock ({@code cerberus.lock.name}) and, when the lock was busy, its holder
 * ({@code cerberus.lock.holder}). With {@link TraceLinks} a hold carries its trace in its holder
 * description, and a waiter's span has a child {@code cerberus.lock.blocked} linked to that trace.
 * docs/OBSERVABILITY.md lists every name.
 *
 * <p>On the class path it is found by every client that sets no metrics, and reports to
 * {@link Metrics#globalRegistry} without observations. Otherwise:
 * {@code Cerberus.builder().metrics(new MicrometerMetrics(registry, observations))}.
 */
public final class MicrometerMetrics implements CerberusMetrics {
    /** The longest wait the acquire histogram has buckets for; longer ones count in its last. */
    private static final Duration LONGEST_BUCKET = Duration.ofMinutes(1);

    private final MeterRegistry registry;
    private final ObservationRegistry observations;
    private final TraceLinks traceLinks;
    /**
     * Per engine, the count of acquisitions under way (the gauge {@code cerberus.lock.waiting}) and
     * the observer that keeps it when there are no observations: it holds no state of its own
     * acquisition, so one serves them all.
     */
    private final ConcurrentMap<String, Waiting> counting = new ConcurrentHashMap<>();

    /** Reports to Micrometer's global registry (what {@link java.util.ServiceLoader} finds). */
    public MicrometerMetrics() {
        this(Metrics.globalRegistry);
    }

    /**
     * @param registry where to report
     */
    public MicrometerMetrics(MeterRegistry registry) {
        this(registry, null, null);
    }

    /**
     * @param registry where to report
     * @param observations where acquisitions and holds are observed (spans, with tracing)
     */
    public MicrometerMetrics(MeterRegistry registry, ObservationRegistry observations) {
        this(registry, observations, null);
    }

    /**
     * @param registry where to report
     * @param observations where acquisitions and holds are observed
     * @param traceLinks how a hold names its trace and a waiter's span links to it; may be null
     */
    public MicrometerMetrics(MeterRegistry registry, ObservationRegistry observations, TraceLinks traceLinks) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.observations = observations == null || observations.isNoop() ? null : observations;
        this.traceLinks = this.observations == null ? null : traceLinks;
    }

    @Override
    public void acquisition(String engine, String mode, AcquireOutcome outcome, Duration waited) {
        Timer.builder("cerberus.lock.acquire")
                .description("Time to acquire a lock or give up, waiting included")
                .tags("engine", engine, "mode", mode, "outcome", tag(outcome))
                .publishPercentileHistogram()
                .maximumExpectedValue(LONGEST_BUCKET)
                .register(registry)
                .record(waited);
    }

    @Override
    public WaitObserver acquiring(String engine, String mode, String name) {
        Waiting counted = counting.computeIfAbsent(engine, this::waitingGauge);
        AtomicInteger under = counted.under;
        under.incrementAndGet();
        if (observations == null) {
            return counted;
        }
        Observation parent = observations.getCurrentObservation();
        Observation wait = Observation.createNotStarted("cerberus.lock.wait", observations)
                .lowCardinalityKeyValue("engine", engine)
                .lowCardinalityKeyValue("mode", mode)
                .highCardinalityKeyValue("cerberus.lock.name", name)
                .start();
        return new Waiting(under, wait, parent);
    }

    private Waiting waitingGauge(String engine) {
        AtomicInteger count = new AtomicInteger();
        Gauge.builder("cerberus.lock.waiting", count, AtomicInteger::get)
                .description("Acquisitions under way: asked, not yet granted or given up")
                .tags("engine", engine)
                .register(registry);
        return new Waiting(count, null, null);
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
        return value.name().toLowerCase(Locale.ROOT);
    }

    /**
     * An acquisition, counted while under way; with observations, one per acquisition, with its wait
     * span and maybe a blocked one.
     */
    private final class Waiting implements WaitObserver {
        private final AtomicInteger under;
        private final Observation wait;
        private final Observation parent;
        /** Ends the span of the wait while blocked; or null. */
        private Runnable blocked;

        Waiting(AtomicInteger under, Observation wait, Observation parent) {
            this.under = under;
            this.wait = wait;
            this.parent = parent;
        }

        @Override
        public String holderNote() {
            return traceLinks == null ? "" : traceLinks.note(wait);
        }

        @Override
        public boolean wantsHolder() {
            return wait != null;
        }

        @Override
        public void busy(String holder) {
            if (wait != null && !holder.isEmpty()) {
                wait.highCardinalityKeyValue("cerberus.lock.holder", holder);
                if (traceLinks != null) {
                    blocked = traceLinks.blocked(wait, holder);
                }
            }
        }

        @Override
        public HoldObserver ended(AcquireOutcome outcome) {
            under.decrementAndGet();
            if (wait == null) {
                return HoldObserver.NONE;
            }
            if (blocked != null) {
                blocked.run();
            }
            wait.lowCardinalityKeyValue("outcome", tag(outcome)).stop();
            if (outcome != AcquireOutcome.GRANTED) {
                return HoldObserver.NONE;
            }
            Observation.Context waited = wait.getContext();
            Observation hold = Observation.createNotStarted("cerberus.lock.hold", observations)
                    .parentObservation(parent)
                    .lowCardinalityKeyValue(waited.getLowCardinalityKeyValue("engine"))
                    .lowCardinalityKeyValue(waited.getLowCardinalityKeyValue("mode"))
                    .highCardinalityKeyValue(waited.getHighCardinalityKeyValue("cerberus.lock.name"))
                    .start();
            return new HoldObserver() {
                @Override
                public void released() {
                    hold.stop();
                }

                @Override
                public void lost(LockLostException reason) {
                    hold.error(reason);
                    hold.stop();
                }
            };
        }
    }

    @Override
    public String toString() {
        return "MicrometerMetrics[" + registry.getClass().getSimpleName() + "]";
    }
}
