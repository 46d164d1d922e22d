package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** The Idempotency-Key filter in a running servlet application over a file: engine, through real HTTP. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = IdempotencyKeyFilterTest.App.class,
        properties = {
            "cerberus.idempotency.http.enabled=true",
            "cerberus.idempotency.http.paths=/orders/**,/strict/**,/exports/**",
            "cerberus.idempotency.http.max-stored-response-size=1KB"
        })
class IdempotencyKeyFilterTest {
    @TempDir
    static Path directory;

    @DynamicPropertySource
    static void engine(DynamicPropertyRegistry registry) {
        registry.add("cerberus.engines", () -> "file:" + directory);
    }

    @LocalServerPort
    int port;

    @Autowired
    Orders orders;

    @Autowired
    @Qualifier("cerberusIdempotencyKeyFilter")
    org.springframework.boot.web.servlet.FilterRegistrationBean<?> filterRegistration;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void reset() {
        orders.created.set(0);
        orders.failNext.set(false);
        orders.gate.set(null);
        orders.transferEncoding.set(null);
    }

    @Test
    void aRetryWithTheSameKeyAndBodyGetsTheStoredResponseMarkedAsReplayed() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = post("/orders/7", key, "{\"qty\":2}");
        HttpResponse<String> second = post("/orders/7", key, "{\"qty\":2}");

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.body()).isEqualTo(first.body()).contains("order-1");
        assertThat(second.headers().firstValue("Location")).contains("/orders/7/order-1");
        assertThat(second.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(second.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(orders.created).hasValue(1);
    }

    @Test
    void theSameKeyWithAnotherBodyIs422AndRunsNothing() throws Exception {
        String key = UUID.randomUUID().toString();
        post("/orders/7", key, "{\"qty\":2}");
        HttpResponse<String> reused = post("/orders/7", key, "{\"qty\":3}");

        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(reused.body()).contains("\"status\":422");
        assertThat(orders.created).hasValue(1);
    }

    @Test
    void theSameKeyOnAnotherPathIsAnotherOperation() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(post("/orders/7", key, "{}").statusCode()).isEqualTo(201);
        assertThat(post("/orders/8", key, "{}").headers().firstValue("Idempotent-Replayed"))
                .isEmpty();
        assertThat(orders.created).hasValue(2);
    }

    @Test
    void aDuplicateWhileTheFirstRunsIs409() throws Exception {
        Gate gate = new Gate();
        orders.gate.set(gate);
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<String>> first =
                http.sendAsync(request("/orders/7", key, "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(gate.awaitEntered(10_000)).isTrue();

        HttpResponse<String> duplicate = post("/orders/7", key, "{}");
        gate.open();

        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.body()).contains("still being processed");
        assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(orders.created).hasValue(1);
    }

    @Test
    void aServerErrorIsNotStoredSoARetryRunsAgain() throws Exception {
        orders.failNext.set(true);
        String key = UUID.randomUUID().toString();
        assertThat(post("/orders/7", key, "{}").statusCode()).isEqualTo(503);
        HttpResponse<String> retry = post("/orders/7", key, "{}");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    }

    @Test
    void withoutTheHeaderTheRequestRunsUnguardedWhenTheKeyIsOptional() throws Exception {
        assertThat(post("/orders/7", null, "{}").statusCode()).isEqualTo(201);
        assertThat(post("/orders/7", null, "{}").statusCode()).isEqualTo(201);
        assertThat(orders.created).hasValue(2);
    }

    @Test
    void pathsOutsideThePatternsAreNotGuarded() throws Exception {
        String key = UUID.randomUUID().toString();
        post("/other/7", key, "{}");
        HttpResponse<String> again = post("/other/7", key, "{}");
        assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(orders.created).hasValue(2);
    }

    @Test
    void anOverlongKeyIs400() throws Exception {
        HttpResponse<String> response = post("/orders/7", "k".repeat(513), "{}");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(orders.created).hasValue(0);
    }

    @Test
    void theSameKeyFromTwoUsersIsTwoKeys() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> ann = post("/orders/7", key, "{}", "ann");
        HttpResponse<String> bob = post("/orders/7", key, "{}", "bob");
        HttpResponse<String> annAgain = post("/orders/7", key, "{}", "ann");

        assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(bob.body()).isNotEqualTo(ann.body());
        assertThat(annAgain.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(annAgain.body()).isEqualTo(ann.body());
        assertThat(orders.created).hasValue(2);
    }

    @Test
    void aBodyLargerThanTheLimitIs413AndRunsNothing() throws Exception {
        HttpResponse<String> large =
                post("/orders/9", UUID.randomUUID().toString(), "\"" + "x".repeat(1024 * 1024) + "\"");

        assertThat(large.statusCode()).isEqualTo(413);
        assertThat(large.body()).contains("at most 1048576B");
        assertThat(orders.created).hasValue(0);
    }

    @Test
    void aChunkedBodyLargerThanTheLimitIs413AndRunsNothing() throws Exception {
        HttpResponse<String> large =
                postChunked("/orders/9", UUID.randomUUID().toString(), "\"" + "x".repeat(1024 * 1024) + "\"");

        assertThat(large.statusCode()).isEqualTo(413);
        assertThat(large.body()).contains("at most 1048576B");
        assertThat(orders.created).hasValue(0);
    }

    @Test
    void aChunkedBodyUnderTheLimitRunsOnceAndIsReplayed() throws Exception {
        String key = UUID.randomUUID().toString();
        String body = "{\"note\":\"" + "y".repeat(600) + "\"}"; // its echo stays under the stored-response limit of 1KB
        HttpResponse<String> first = postChunked("/orders/9", key, body);
        HttpResponse<String> second = postChunked("/orders/9", key, body);

        assertThat(orders.transferEncoding)
                .as("the body came in chunks, without a Content-Length")
                .hasValue("chunked");
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).contains(body);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(orders.created).hasValue(1);
    }

    @Test
    void aLargeBodyWithoutALengthIsReadOnlyToTheLimit() throws Exception {
        IdempotencyKeyFilter filter = (IdempotencyKeyFilter) filterRegistration.getFilter();
        AtomicLong served = new AtomicLong();
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders/9") {
            @Override
            public long getContentLengthLong() {
                return -1;
            }

            @Override
            public int getContentLength() {
                return -1;
            }

            @Override
            public ServletInputStream getInputStream() {
                return new LongBody(16 * 1024 * 1024, served);
            }
        };
        request.addHeader("Idempotency-Key", UUID.randomUUID().toString());
        MockHttpServletResponse response = new MockHttpServletResponse();
        AtomicBoolean ran = new AtomicBoolean();

        filter.doFilter(request, response, (req, res) -> ran.set(true));

        assertThat(response.getStatus()).isEqualTo(413);
        assertThat(ran).as("the operation ran").isFalse();
        assertThat(served.get())
                .as("bytes read of a 16MB body")
                .isGreaterThan(1024 * 1024)
                .isLessThanOrEqualTo(1024 * 1024 + 64 * 1024);
    }

    /** A request body of a given size, counting what was read of it. */
    private static final class LongBody extends ServletInputStream {
        private final long size;
        private final AtomicLong served;

        LongBody(long size, AtomicLong served) {
            this.size = size;
            this.served = served;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0];
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = (int) Math.min(len, size - served.get());
            if (n <= 0) {
                return -1;
            }
            java.util.Arrays.fill(b, off, off + n, (byte) 'z');
            served.addAndGet(n);
            return n;
        }

        @Override
        public boolean isFinished() {
            return served.get() >= size;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
            throw new UnsupportedOperationException("blocking reads only");
        }
    }

    @Test
    void theSameKeyAndBodyWithAnotherQueryStringIs422AndRunsNothing() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = post("/orders/7?account=1", key, "{\"qty\":2}");
        HttpResponse<String> otherAccount = post("/orders/7?account=2", key, "{\"qty\":2}");
        HttpResponse<String> retry = post("/orders/7?account=1", key, "{\"qty\":2}");

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(otherAccount.statusCode())
                .as("not account 1's response replayed")
                .isEqualTo(422);
        assertThat(otherAccount.body()).contains("query");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(orders.created).hasValue(1);
    }

    @Test
    void aResponseLargerThanTheStoredLimitIsSentButNotStoredAndADuplicateIs422NotRunAgain() throws Exception {
        String key = UUID.randomUUID().toString();
        String large = "{\"note\":\"" + "x".repeat(2048) + "\"}";
        HttpResponse<String> first = post("/orders/8", key, large);
        HttpResponse<String> duplicate = post("/orders/8", key, large);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).as("the client gets the whole response").hasSizeGreaterThan(2048);
        assertThat(duplicate.statusCode()).isEqualTo(422);
        assertThat(duplicate.body())
                .contains("Response not kept")
                .contains("larger than the 1024 bytes stored for replay");
        assertThat(orders.created).as("the duplicate did not run again").hasValue(1);
    }

    @Test
    void twoLongPathsWithOneKeyAndBodyAreTwoOperationsNeverReplayingEachOther() throws Exception {
        String key = UUID.randomUUID().toString();
        String common =
                "a".repeat(990); // one path of 1,000 characters and the next differ only in their last character
        HttpResponse<String> first = post("/orders/" + common + "01", key, "{}");
        HttpResponse<String> second = post("/orders/" + common + "02", key, "{}");
        HttpResponse<String> firstAgain = post("/orders/" + common + "01", key, "{}");

        assertThat(("/orders/" + common + "01").length()).isEqualTo(1000);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.headers().firstValue("Idempotent-Replayed"))
                .as("not the first path's response")
                .isEmpty();
        assertThat(second.body()).contains("order-2");
        assertThat(firstAgain.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(firstAgain.body()).isEqualTo(first.body());
        assertThat(orders.created).hasValue(2);
    }

    @Test
    void aResponseThatPassesTheStoredLimitGoesToTheClientAsWrittenAndIsSettledBeforeItsFirstByte() throws Exception {
        Gate gate = new Gate();
        orders.gate.set(gate);
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<java.io.InputStream>> first =
                http.sendAsync(request("/exports/1", key, "{}"), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(gate.awaitEntered(10_000)).isTrue();

        // the handler wrote 4 KB (the limit is 1 KB) and now waits: the client already has them
        HttpResponse<java.io.InputStream> response = first.get(10, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        java.io.InputStream body = response.body();
        assertThat(body.readNBytes(Orders.CHUNK)).hasSize(Orders.CHUNK).containsOnly((byte) 'e');
        HttpResponse<String> duplicate = post("/exports/1", key, "{}");
        assertThat(duplicate.statusCode())
                .as("settled as not kept before the first byte went out, not in progress")
                .isEqualTo(422);
        assertThat(duplicate.body()).contains("Response not kept");

        gate.open();
        assertThat(body.readAllBytes()).hasSize(Orders.CHUNK).containsOnly((byte) 'f');
        assertThat(orders.exports).as("the duplicate did not run").hasValue(1);
    }

    private HttpResponse<String> post(String path, String key, String body) throws Exception {
        return post(path, key, body, null);
    }

    /** Posts the body in chunks (HTTP/1.1, Transfer-Encoding: chunked, no Content-Length). */
    private HttpResponse<String> postChunked(String path, String key, String body) throws Exception {
        byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .version(HttpClient.Version.HTTP_1_1)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(bytes)))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String key, String body, String user) throws Exception {
        return http.send(request(path, key, body, user), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String path, String key, String body) {
        return request(path, key, body, null);
    }

    private HttpRequest request(String path, String key, String body, String user) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        if (user != null) {
            request.header(TestUsers.HEADER, user);
        }
        return request.build();
    }

    /** Stands for an authentication filter: the request's principal is the name in a test header. */
    static class TestUsers extends org.springframework.web.filter.OncePerRequestFilter {
        static final String HEADER = "X-Test-User";

        @Override
        protected void doFilterInternal(
                jakarta.servlet.http.HttpServletRequest request,
                jakarta.servlet.http.HttpServletResponse response,
                jakarta.servlet.FilterChain chain)
                throws jakarta.servlet.ServletException, java.io.IOException {
            String user = request.getHeader(HEADER);
            chain.doFilter(
                    user == null
                            ? request
                            : new jakarta.servlet.http.HttpServletRequestWrapper(request) {
                                @Override
                                public java.security.Principal getUserPrincipal() {
                                    return () -> user;
                                }
                            },
                    response);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(Orders.class)
    static class App {
        @org.springframework.context.annotation.Bean
        org.springframework.boot.web.servlet.FilterRegistrationBean<TestUsers> testUsers() {
            var registration = new org.springframework.boot.web.servlet.FilterRegistrationBean<>(new TestUsers());
            registration.setOrder(-100); // where an authentication filter runs: before the Idempotency-Key filter (0)
            return registration;
        }
    }

    @RestController
    static class Orders {
        static final int CHUNK = 4096;
        final AtomicInteger created = new AtomicInteger();
        final AtomicInteger exports = new AtomicInteger();
        final java.util.concurrent.atomic.AtomicBoolean failNext = new java.util.concurrent.atomic.AtomicBoolean();
        final AtomicReference<Gate> gate = new AtomicReference<>();
        final AtomicReference<String> transferEncoding = new AtomicReference<>();

        @PostMapping({"/orders/{id}", "/other/{id}"})
        ResponseEntity<String> create(
                @PathVariable String id,
                @RequestBody String body,
                @RequestHeader(name = "Transfer-Encoding", required = false) String encoding) {
            transferEncoding.set(encoding);
            Gate waiting = gate.get();
            if (waiting != null) {
                waiting.enterAndWait();
            }
            if (failNext.getAndSet(false)) {
                return ResponseEntity.status(503).body("{\"error\":\"busy\"}");
            }
            String order = "order-" + created.incrementAndGet();
            return ResponseEntity.status(201)
                    .location(URI.create("/orders/" + id + "/" + order))
                    .header("Content-Type", "application/json")
                    .body("{\"order\":\"" + order + "\",\"body\":" + body + "}");
        }

        @PostMapping("/exports/{id}")
        void export(@PathVariable String id, jakarta.servlet.http.HttpServletResponse response)
                throws java.io.IOException {
            exports.incrementAndGet();
            response.setContentType("application/octet-stream");
            java.io.OutputStream out = response.getOutputStream();
            out.write("e".repeat(CHUNK).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            Gate waiting = gate.get();
            if (waiting != null) {
                waiting.enterAndWait();
            }
            out.write("f".repeat(CHUNK).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }
    }
}
