package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.testkit.Poll;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.micrometer.tracing.test.autoconfigure.AutoConfigureTracing;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * A Spring Boot application that traces: a waiter's span for a busy lock is linked to the trace
 * of the request that holds it, and the actuator names that trace and the most contended locks.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = TracingTest.App.class,
        properties = {
            "cerberus.engines=mem:traced-app",
            "management.tracing.sampling.probability=1.0",
            "management.endpoints.web.exposure.include=cerberus"
        })
@AutoConfigureTracing
class TracingTest {
    @LocalServerPort
    int port;

    @Autowired
    Cerberus cerberus;

    @Autowired
    Tracer tracer;

    @Autowired
    InMemorySpanExporter exported;

    @Autowired
    StartedSpans started;

    @Autowired
    SdkTracerProvider tracerProvider;

    @Test
    @SuppressWarnings("try") // a span's scope is used for the span it makes current
    void aBlockedWaitersSpanIsLinkedToTheHoldersTraceAndTheActuatorNamesIt() throws Exception {
        Span holderRequest = tracer.nextSpan().name("holder-request").start();
        String holderTrace = holderRequest.context().traceId();
        Lease held;
        try (Tracer.SpanInScope scope = tracer.withSpan(holderRequest)) {
            held = cerberus.lock("order:42").acquire(Duration.ofSeconds(5));
        }
        assertThat(get("/actuator/cerberus")
                        .path("engines")
                        .path("mem")
                        .path("locks")
                        .get(0)
                        .path("holder")
                        .asString())
                .contains("trace=" + holderTrace + "/");

        CompletableFuture<String> waiterTrace = CompletableFuture.supplyAsync(() -> {
            Span waiterRequest = tracer.nextSpan().name("waiter-request").start();
            try (Tracer.SpanInScope scope = tracer.withSpan(waiterRequest)) {
                Optional<Lease> lease = cerberus.lock("order:42").tryAcquire(Duration.ofSeconds(10));
                lease.orElseThrow().close();
                return waiterRequest.context().traceId();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            } finally {
                waiterRequest.end();
            }
        });
        Poll.until(
                "the waiter is blocked", Duration.ofSeconds(10), () -> started.names.contains("cerberus.lock.blocked"));
        held.close();
        holderRequest.end();
        String waiter = waiterTrace.get(10, TimeUnit.SECONDS);
        tracerProvider.forceFlush().join(10, TimeUnit.SECONDS);

        List<SpanData> spans = exported.getFinishedSpanItems();
        SpanData blocked = spans.stream()
                .filter(span -> span.getName().equals("cerberus.lock.blocked"))
                .findFirst()
                .orElseThrow();
        assertThat(blocked.getTraceId()).isEqualTo(waiter);
        assertThat(blocked.getLinks())
                .extracting(LinkData::getSpanContext)
                .extracting(context -> context.getTraceId())
                .containsExactly(holderTrace);
        SpanData waiting = spans.stream()
                .filter(span -> span.getSpanId().equals(blocked.getParentSpanId()))
                .findFirst()
                .orElseThrow();
        assertThat(waiting.getName()).isEqualTo("cerberus.lock.wait");
        assertThat(spans)
                .filteredOn(span -> span.getName().equals("cerberus.lock.hold"))
                .extracting(SpanData::getTraceId)
                .contains(holderTrace, waiter);

        JsonNode contended = get("/actuator/cerberus").path("contended");
        assertThat(contended.get(0).path("name").asString()).isEqualTo("order:42");
        assertThat(contended.get(0).path("contended").asLong()).isEqualTo(1);
        assertThat(contended.get(0).path("lastHolder").asString()).contains("trace=" + holderTrace + "/");
    }

    private JsonNode get(String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(path + ": " + response.body()).isEqualTo(200);
        return new ObjectMapper().readTree(response.body());
    }

    /** The names of the spans started so far: a span is exported only when it ends. */
    static final class StartedSpans implements SpanProcessor {
        final Set<String> names = ConcurrentHashMap.newKeySet();

        @Override
        public void onStart(Context parentContext, ReadWriteSpan span) {
            names.add(span.getName());
        }

        @Override
        public boolean isStartRequired() {
            return true;
        }

        @Override
        public void onEnd(ReadableSpan span) {}

        @Override
        public boolean isEndRequired() {
            return false;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        InMemorySpanExporter inMemorySpanExporter() {
            return InMemorySpanExporter.create();
        }

        @Bean
        StartedSpans startedSpans() {
            return new StartedSpans();
        }
    }
}
