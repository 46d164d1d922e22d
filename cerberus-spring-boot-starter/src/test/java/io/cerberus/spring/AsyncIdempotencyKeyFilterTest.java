package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.TestTimes;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * The Idempotency-Key filter around asynchronous controllers, in a running servlet application
 * over the {@code mem:} engine, through real HTTP: the key stays claimed until the asynchronous
 * work ends, and the response written then is the one stored and replayed.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = AsyncIdempotencyKeyFilterTest.App.class,
        properties = {
            "cerberus.engines=mem:async-http",
            "cerberus.idempotency.http.enabled=true",
            "cerberus.idempotency.http.paths=/async/**"
        })
class AsyncIdempotencyKeyFilterTest {
    private static final long WAIT = TestTimes.millis(10_000).toMillis();

    static {
        // Spring Framework 7 hands a StreamingResponseBody a stream whose flush() does nothing unless this flag is set
        // (ServletServerHttpResponse); an application that streams sets it, and the filter must then let each flush
        // through
        System.setProperty("spring.http.response.flush.enabled", "true");
    }

    @LocalServerPort
    int port;

    @Autowired
    AsyncOrders orders;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void reset() {
        orders.runs.set(0);
        orders.pending.clear();
        orders.gate.set(new Gate());
    }

    @Test
    void aDuplicateWhileADeferredResultIsPendingIs409AndAfterItCompletesGetsTheAsyncResponse() throws Exception {
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<String>> first =
                http.sendAsync(request("/async/deferred", key), HttpResponse.BodyHandlers.ofString());
        DeferredResult<ResponseEntity<String>> pending = orders.pending.poll(WAIT, TimeUnit.MILLISECONDS);
        assertThat(pending).as("the controller was called").isNotNull();

        HttpResponse<String> duplicate = post("/async/deferred", key);
        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.body()).contains("still being processed");

        pending.setResult(ResponseEntity.status(201)
                .header("Location", "/orders/a-1")
                .contentType(MediaType.APPLICATION_JSON)
                .body("{\"order\":\"a-1\"}"));
        HttpResponse<String> completed = first.get(WAIT, TimeUnit.MILLISECONDS);
        assertThat(completed.statusCode()).isEqualTo(201);
        assertThat(completed.body()).isEqualTo("{\"order\":\"a-1\"}");

        HttpResponse<String> replayed = post("/async/deferred", key);
        assertThat(replayed.statusCode()).isEqualTo(201);
        assertThat(replayed.body()).isEqualTo("{\"order\":\"a-1\"}");
        assertThat(replayed.headers().firstValue("Location")).contains("/orders/a-1");
        assertThat(replayed.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(replayed.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(orders.runs).hasValue(1);
    }

    @Test
    void theResponseOfACallableIsStoredAndReplayed() throws Exception {
        assertRunsOnceAndReplays("/async/callable");
    }

    @Test
    void theResponseOfACompletableFutureIsStoredAndReplayed() throws Exception {
        assertRunsOnceAndReplays("/async/future");
    }

    private void assertRunsOnceAndReplays(String path) throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = post(path, key);
        HttpResponse<String> duplicate = post(path, key);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).isEqualTo("{\"run\":1}");
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(duplicate.statusCode()).isEqualTo(201);
        assertThat(duplicate.body()).isEqualTo(first.body());
        assertThat(duplicate.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(orders.runs).hasValue(1);
    }

    @Test
    void aTimedOutRequestHoldsItsKeyUntilTheTimeoutThenReleasesItWithoutStoringTheTimeoutAnswer() throws Exception {
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<String>> first =
                http.sendAsync(request("/async/times-out", key), HttpResponse.BodyHandlers.ofString());
        assertThat(orders.pending.poll(WAIT, TimeUnit.MILLISECONDS)).isNotNull();
        assertThat(post("/async/times-out", key).statusCode())
                .as("a duplicate before the timeout")
                .isEqualTo(409);

        HttpResponse<String> timedOut = first.get(WAIT, TimeUnit.MILLISECONDS);
        assertThat(timedOut.statusCode()).isEqualTo(202);
        assertThat(timedOut.body()).isEqualTo("still working");

        HttpResponse<String> retry = post("/async/times-out", key);
        assertThat(retry.statusCode()).isEqualTo(202);
        assertThat(retry.headers().firstValue("Idempotent-Replayed"))
                .as("a timeout answer is not stored")
                .isEmpty();
        assertThat(orders.runs).hasValue(2);
    }

    @Test
    void anAsyncFailureIsNotStoredSoARetryRunsAgain() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(post("/async/fails", key).statusCode()).isEqualTo(500);
        assertThat(post("/async/fails", key).statusCode()).isEqualTo(500);
        assertThat(orders.runs).hasValue(2);
    }

    @Test
    void aStreamedBodyGoesOutAsWrittenHoldsItsKeyWhileItStreamsAndIsNotStored() throws Exception {
        assertStreamsAndIsNotStored("/async/stream", "chunk 1");
    }

    @Test
    void serverSentEventsGoOutAsSentHoldTheirKeyWhileTheyStreamAndAreNotStored() throws Exception {
        assertStreamsAndIsNotStored("/async/events", "data:event 1");
    }

    private void assertStreamsAndIsNotStored(String path, String firstLine) throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<InputStream> first = http.sendAsync(request(path, key), HttpResponse.BodyHandlers.ofInputStream())
                .get(WAIT, TimeUnit.MILLISECONDS);
        BufferedReader lines = new BufferedReader(new InputStreamReader(first.body(), StandardCharsets.UTF_8));
        assertThat(CompletableFuture.supplyAsync(() -> readLine(lines)).get(WAIT, TimeUnit.MILLISECONDS))
                .as("the first part reaches the client while the stream is still open")
                .isEqualTo(firstLine);

        assertThat(post(path, key).statusCode())
                .as("a duplicate while it streams")
                .isEqualTo(409);
        orders.gate.get().open();
        String rest = CompletableFuture.supplyAsync(() -> readRest(lines)).get(WAIT, TimeUnit.MILLISECONDS);
        assertThat(rest).contains("2");

        orders.gate.set(new Gate());
        orders.gate.get().open();
        HttpResponse<String> retry = post(path, key);
        assertThat(retry.statusCode()).isEqualTo(200);
        assertThat(retry.headers().firstValue("Idempotent-Replayed"))
                .as("a stream is not stored")
                .isEmpty();
        assertThat(orders.runs).hasValue(2);
    }

    private static String readLine(BufferedReader lines) {
        try {
            return lines.readLine();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String readRest(BufferedReader lines) {
        StringBuilder rest = new StringBuilder();
        for (String line; (line = readLine(lines)) != null; ) {
            rest.append(line).append('\n');
        }
        return rest.toString();
    }

    private HttpResponse<String> post(String path, String key) throws Exception {
        return http.send(request(path, key), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String path, String key) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofMillis(WAIT))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(AsyncOrders.class)
    static class App {}

    @RestController
    static class AsyncOrders {
        final AtomicInteger runs = new AtomicInteger();
        final BlockingQueue<DeferredResult<ResponseEntity<String>>> pending = new LinkedBlockingQueue<>();
        final AtomicReference<Gate> gate = new AtomicReference<>(new Gate());

        @PostMapping("/async/deferred")
        DeferredResult<ResponseEntity<String>> deferred(@RequestBody String body) {
            runs.incrementAndGet();
            DeferredResult<ResponseEntity<String>> result =
                    new DeferredResult<>(TestTimes.millis(30_000).toMillis());
            pending.add(result);
            return result;
        }

        @PostMapping("/async/times-out")
        DeferredResult<ResponseEntity<String>> timesOut(@RequestBody String body) {
            runs.incrementAndGet();
            DeferredResult<ResponseEntity<String>> result = new DeferredResult<>(
                    TestTimes.millis(1_000).toMillis(),
                    () -> ResponseEntity.status(202).body("still working"));
            pending.add(result);
            return result;
        }

        @PostMapping("/async/callable")
        Callable<ResponseEntity<String>> callable(@RequestBody String body) {
            int run = runs.incrementAndGet();
            return () -> created(run);
        }

        @PostMapping("/async/future")
        CompletableFuture<ResponseEntity<String>> future(@RequestBody String body) {
            int run = runs.incrementAndGet();
            return CompletableFuture.supplyAsync(() -> created(run));
        }

        private static ResponseEntity<String> created(int run) {
            return ResponseEntity.status(201)
                    .contentType(MediaType.APPLICATION_JSON)
                    .body("{\"run\":" + run + "}");
        }

        @PostMapping("/async/fails")
        Callable<String> fails(@RequestBody String body) {
            runs.incrementAndGet();
            return () -> {
                throw new IllegalStateException("the async work failed");
            };
        }

        @PostMapping("/async/stream")
        StreamingResponseBody stream(@RequestBody String body) {
            runs.incrementAndGet();
            Gate waiting = gate.get();
            return out -> {
                out.write("chunk 1\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                waiting.enterAndWait();
                out.write("chunk 2\n".getBytes(StandardCharsets.UTF_8));
            };
        }

        @PostMapping("/async/events")
        SseEmitter events(@RequestBody String body) {
            runs.incrementAndGet();
            Gate waiting = gate.get();
            SseEmitter emitter = new SseEmitter(TestTimes.millis(30_000).toMillis());
            CompletableFuture.runAsync(() -> {
                try {
                    emitter.send("event 1");
                    waiting.enterAndWait();
                    emitter.send("event 2");
                    emitter.complete();
                } catch (java.io.IOException | RuntimeException e) {
                    emitter.completeWithError(e);
                }
            });
            return emitter;
        }
    }
}
