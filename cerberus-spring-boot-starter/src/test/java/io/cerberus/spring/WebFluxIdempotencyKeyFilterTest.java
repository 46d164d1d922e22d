package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.TestTimes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The WebFlux Idempotency-Key filter in a running reactive application over a {@code file:}
 * engine, through real HTTP: the servlet filter's answers (replay, 409, 413, 422, 400), the same
 * properties.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = WebFluxIdempotencyKeyFilterTest.App.class,
        properties = {
            "spring.main.web-application-type=reactive",
            "cerberus.idempotency.http.enabled=true",
            "cerberus.idempotency.http.paths=/payments/**",
            "cerberus.idempotency.http.max-stored-response-size=1KB",
            "cerberus.idempotency.http.max-body-size=4KB"
        })
class WebFluxIdempotencyKeyFilterTest {
    @TempDir
    static Path directory;

    @DynamicPropertySource
    static void engine(DynamicPropertyRegistry registry) {
        registry.add("cerberus.engines", () -> "file:" + directory);
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Autowired
    Payments payments;

    @Autowired
    ApplicationContext context;

    @BeforeEach
    void reset() {
        payments.charged.set(0);
        payments.failNext.set(false);
        payments.throwNext.set(false);
        payments.hold.set(null);
    }

    @Test
    void theFilterIsTheReactiveOne() {
        assertThat(context.getBean("cerberusIdempotencyKeyFilter")).isInstanceOf(ReactiveIdempotencyKeyFilter.class);
    }

    @Test
    void threeConcurrentPostsWithOneKeyChargeOnce() throws Exception {
        Held held = new Held();
        payments.hold.set(held);
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<String>> first = send("/payments", key, "{\"cents\":500}");
        assertThat(held.entered.await(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();

        List<CompletableFuture<HttpResponse<String>>> duplicates = new ArrayList<>();
        duplicates.add(send("/payments", key, "{\"cents\":500}"));
        duplicates.add(send("/payments", key, "{\"cents\":500}"));
        for (CompletableFuture<HttpResponse<String>> duplicate : duplicates) {
            HttpResponse<String> response = duplicate.get(10, TimeUnit.SECONDS);
            assertThat(response.statusCode()).as("while the first still runs").isEqualTo(409);
            assertThat(response.body()).contains("still being processed");
        }
        held.release.tryEmitEmpty();

        HttpResponse<String> ran = first.get(10, TimeUnit.SECONDS);
        HttpResponse<String> retry = send("/payments", key, "{\"cents\":500}").get(10, TimeUnit.SECONDS);

        assertThat(ran.statusCode()).isEqualTo(201);
        assertThat(ran.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(ran.body()).contains("charge-1");
        assertThat(retry.headers().firstValue("Location")).contains("/payments/charge-1");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(payments.charged).as("charged once").hasValue(1);
    }

    @Test
    void theSameKeyWithAnotherBodyIs422AndRunsNothing() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(post("/payments", key, "{\"cents\":1}").statusCode()).isEqualTo(201);
        HttpResponse<String> reused = post("/payments", key, "{\"cents\":2}");

        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(reused.body()).contains("\"status\":422");
        assertThat(payments.charged).hasValue(1);
    }

    @Test
    void aBodyLargerThanTheLimitIs413AndRunsNothing() throws Exception {
        // a body the client has sent whole when the 413 comes: with a body still being sent, the server may close
        // (and the client's system drop the unread 413 at the reset) before the client reads its answer
        HttpResponse<String> large =
                post("/payments", UUID.randomUUID().toString(), "\"" + "x".repeat(8 * 1024) + "\"");

        assertThat(large.statusCode()).isEqualTo(413);
        assertThat(large.body()).contains("at most 4096B");
        assertThat(payments.charged).hasValue(0);
    }

    @Test
    void anOverlongKeyIs400() throws Exception {
        assertThat(post("/payments", "k".repeat(513), "{}").statusCode()).isEqualTo(400);
        assertThat(payments.charged).hasValue(0);
    }

    @Test
    void aServerErrorIsNotStoredSoARetryRunsAgain() throws Exception {
        payments.failNext.set(true);
        String key = UUID.randomUUID().toString();
        assertThat(post("/payments", key, "{}").statusCode()).isEqualTo(503);
        HttpResponse<String> retry = post("/payments", key, "{}");

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(payments.charged).hasValue(2);
    }

    @Test
    void aHandlerErrorReleasesTheKeySoARetryRunsAgain() throws Exception {
        payments.throwNext.set(true);
        String key = UUID.randomUUID().toString();
        assertThat(post("/payments", key, "{}").statusCode()).isEqualTo(500);
        HttpResponse<String> retry = post("/payments", key, "{}");

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(payments.charged).hasValue(2);
    }

    @Test
    void aResponseLargerThanTheStoredLimitIsSentButNotStoredAndADuplicateIs422() throws Exception {
        String key = UUID.randomUUID().toString();
        String large = "{\"note\":\"" + "x".repeat(2048) + "\"}";
        HttpResponse<String> first = post("/payments", key, large);
        HttpResponse<String> duplicate = post("/payments", key, large);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).as("the client gets the whole response").hasSizeGreaterThan(2048);
        assertThat(duplicate.statusCode()).isEqualTo(422);
        assertThat(duplicate.body()).contains("larger than the 1024 bytes stored for replay");
        assertThat(payments.charged).as("the duplicate did not run again").hasValue(1);
    }

    @Test
    void withoutTheHeaderTheRequestRunsUnguarded() throws Exception {
        assertThat(post("/payments", null, "{}").statusCode()).isEqualTo(201);
        assertThat(post("/payments", null, "{}").statusCode()).isEqualTo(201);
        assertThat(payments.charged).hasValue(2);
    }

    private HttpResponse<String> post(String path, String key, String body) throws Exception {
        return send(path, key, body).get(10, TimeUnit.SECONDS);
    }

    private CompletableFuture<HttpResponse<String>> send(String path, String key, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Holds a charge inside its handler until the test releases it; tells when it got there. */
    static final class Held {
        final CountDownLatch entered = new CountDownLatch(1);
        final Sinks.Empty<Void> release = Sinks.empty();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Payments.class)
    static class App {}

    @RestController
    static class Payments {
        final AtomicInteger charged = new AtomicInteger();
        final AtomicBoolean failNext = new AtomicBoolean();
        final AtomicBoolean throwNext = new AtomicBoolean();
        final AtomicReference<Held> hold = new AtomicReference<>();

        @PostMapping("/payments")
        Mono<ResponseEntity<String>> charge(@RequestBody String body) {
            int charge = charged.incrementAndGet();
            if (failNext.getAndSet(false)) {
                return Mono.just(ResponseEntity.status(503).body("{\"error\":\"try later\"}"));
            }
            if (throwNext.getAndSet(false)) {
                return Mono.error(new IllegalStateException("the payment provider broke"));
            }
            Held held = hold.get();
            Mono<Void> inside = held == null
                    ? Mono.empty()
                    : Mono.fromRunnable(held.entered::countDown).then(held.release.asMono());
            return inside.then(Mono.fromSupplier(() -> ResponseEntity.status(201)
                    .header("Location", "/payments/charge-" + charge)
                    .header("Content-Type", "application/json")
                    .body("{\"charge\":\"charge-" + charge + "\",\"request\":" + body + "}")));
        }
    }
}
