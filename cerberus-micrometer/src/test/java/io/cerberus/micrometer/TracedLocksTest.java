package io.cerberus.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * A waiter's trace names who holds what it waits for: spans of waits and holds under the callers'
 * spans, the holder's trace in its holder description, the waiter's blocked span linked to it.
 */
@SuppressWarnings("try") // the scopes of spans are used for what they make current
class TracedLocksTest {
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final SimpleTracer tracer = new SimpleTracer();
    private final ObservationRegistry observations = ObservationRegistry.create();

    /** How the registry was told to distribute the acquire timer: what a Prometheus registry builds buckets from. */
    private final AtomicReference<DistributionStatisticConfig> acquireDistribution = new AtomicReference<>();

    TracedLocksTest() {
        observations.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
        meters.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (id.getName().equals("cerberus.lock.acquire")) {
                    acquireDistribution.set(config);
                }
                return config;
            }
        });
    }

    @Test
    void aWaitersSpanIsLinkedToTheTraceThatHoldsTheLock() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("mem:traced")
                .metrics(new MicrometerMetrics(meters, observations, new TraceLinks(tracer)))
                .build()) {
            Span holderRequest = tracer.nextSpan().name("holder-request").start();
            Lease held;
            try (Tracer.SpanInScope scope = tracer.withSpan(holderRequest)) {
                held = cerberus.lock("order:42").acquire(Duration.ofSeconds(5));
            }
            String holderTrace = holderRequest.context().traceId();
            assertThat(cerberus.inspect("order:42"))
                    .extracting(LockInfo::holder)
                    .singleElement()
                    .asString()
                    .contains("trace=" + holderTrace + "/");

            CompletableFuture<Optional<Lease>> waiter = CompletableFuture.supplyAsync(() -> {
                Span waiterRequest = tracer.nextSpan().name("waiter-request").start();
                try (Tracer.SpanInScope scope = tracer.withSpan(waiterRequest)) {
                    return cerberus.lock("order:42").tryAcquire(Duration.ofSeconds(10));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                } finally {
                    waiterRequest.end();
                }
            });
            poll("the waiter is blocked", () -> !spans("cerberus.lock.blocked").isEmpty());
            assertThat(meters.get("cerberus.lock.waiting").gauge().value()).isEqualTo(1);
            held.close();
            holderRequest.end();
            waiter.get(10, TimeUnit.SECONDS).orElseThrow().close();

            SimpleSpan blocked = spans("cerberus.lock.blocked").get(0);
            assertThat(blocked.getLinks())
                    .extracting(link -> link.getTraceContext().traceId())
                    .containsExactly(holderTrace);
            SimpleSpan waiterWait = spans("cerberus.lock.wait").stream()
                    .filter(span -> span.getSpanId().equals(blocked.getParentId()))
                    .findFirst()
                    .orElseThrow();
            assertThat(waiterWait.getTraceId()).isNotEqualTo(holderTrace);
            assertThat(waiterWait.getTags())
                    .containsEntry("outcome", "granted")
                    .containsEntry("cerberus.lock.name", "order:42")
                    .hasEntrySatisfying(
                            "cerberus.lock.holder", holder -> assertThat(holder).contains("trace=" + holderTrace));
            assertThat(spans("cerberus.lock.hold")).hasSize(2);
            assertThat(spans("cerberus.lock.wait"))
                    .extracting(SimpleSpan::getParentId)
                    .doesNotContainNull();
        }
        Timer acquire =
                meters.get("cerberus.lock.acquire").tag("outcome", "granted").timer();
        assertThat(acquire.count()).isEqualTo(2);
        assertThat(acquireDistribution.get().isPercentileHistogram()).isTrue();
        assertThat(meters.get("cerberus.lock.waiting").gauge().value()).isZero();
    }

    @Test
    void aLostHoldEndsItsSpanWithTheLoss() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("mem:traced-loss")
                .defaultLease(Duration.ofMillis(300))
                .metrics(new MicrometerMetrics(meters, observations))
                .build()) {
            Lease held = cerberus.lock("report").acquire(Duration.ofSeconds(5));
            assertThat(cerberus.forceRelease("report", held.fencingToken())).isTrue();
            poll("the hold is lost", () -> !held.isValid());
            poll("its span ended", () -> !spans("cerberus.lock.hold").isEmpty());
            assertThat(spans("cerberus.lock.hold").get(0).getError()).hasMessageContaining("report");
        }
    }

    private List<SimpleSpan> spans(String name) {
        return tracer.getSpans().stream()
                .filter(span -> name.equals(span.getName()))
                .toList();
    }

    private static void poll(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
