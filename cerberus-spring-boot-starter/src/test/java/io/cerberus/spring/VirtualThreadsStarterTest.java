package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.PinnedThreads;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The starter in an application that serves its requests on virtual threads
 * ({@code spring.threads.virtual.enabled=true}): {@code @WithDistributedLock} and {@code @Idempotent}
 * methods called from 200 concurrent requests each run on a virtual thread, one at a time per key,
 * once per idempotency key, and no virtual thread is pinned to its carrier in a Cerberus frame. It
 * needs Java 21 or newer: the build runs it a second time on the JDK {@code virtual-threads.java}
 * names ({@code ./test-all} passes one); on Java 17 it is skipped.
 */
@EnabledForJreRange(
        min = JRE.JAVA_21,
        disabledReason = "virtual threads need Java 21 or newer: ./test-all runs this on one it finds")
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = VirtualThreadsStarterTest.App.class,
        properties = {"spring.threads.virtual.enabled=true", "cerberus.engines=mem:"})
class VirtualThreadsStarterTest {
    private static final int REQUESTS = 200;

    @LocalServerPort
    int port;

    @Autowired
    Orders orders;

    @TempDir
    Path recordings;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void lockedAndIdempotentMethodsServeConcurrentRequestsOnVirtualThreads() throws Exception {
        // a first round loads the classes: a virtual thread that waits for a class being loaded
        // stays pinned meanwhile, which is the JDK's doing and happens once per class
        serve(20, UUID.randomUUID().toString());
        String payment = UUID.randomUUID().toString();
        Path recorded = recordings.resolve("pinned.jfr");
        try (Recording recording = new Recording()) {
            recording.enable(PinnedThreads.EVENT).withStackTrace();
            recording.start();
            serve(REQUESTS, payment);
            recording.stop();
            recording.dump(recorded);
        }
        assertThat(orders.onPlatformThreads())
                .as("locked calls that ran on a platform thread")
                .isZero();
        assertThat(orders.mostInside().values())
                .as("most calls inside at once, per order")
                .containsOnly(1);
        assertThat(orders.held()).isEqualTo(20 + REQUESTS);
        assertThat(orders.charged(payment)).as("payments charged for one key").isEqualTo(1);
        assertThat(PinnedThreads.inCerberus(recorded))
                .as("virtual threads pinned in a Cerberus frame")
                .isEmpty();
    }

    /** Sends {@code count} requests to locked methods (five orders) and as many to charge one payment, all at once. */
    private void serve(int count, String payment) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            answers.add(post("/orders/" + (i % 5)));
            answers.add(post("/payments/" + payment));
        }
        for (CompletableFuture<HttpResponse<String>> answer : answers) {
            HttpResponse<String> response = answer.get(2, TimeUnit.MINUTES);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }
    }

    private CompletableFuture<HttpResponse<String>> post(String path) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    /** @return whether the current thread is virtual ({@code Thread.isVirtual}, which Java 17 does not have) */
    static boolean onVirtualThread() {
        try {
            return (Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread());
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }

    @Configuration
    @EnableAutoConfiguration
    @Import({Orders.class, Api.class})
    static class App {}

    /** The annotated methods, with what the test checks of their calls (methods, as callers hold a proxy). */
    static class Orders {
        final Map<Integer, AtomicInteger> inside = new ConcurrentHashMap<>();
        final Map<Integer, Integer> mostInside = new ConcurrentHashMap<>();
        final AtomicInteger held = new AtomicInteger();
        final AtomicInteger onPlatformThreads = new AtomicInteger();
        final Map<String, AtomicInteger> charged = new ConcurrentHashMap<>();

        public int onPlatformThreads() {
            return onPlatformThreads.get();
        }

        public Map<Integer, Integer> mostInside() {
            return mostInside;
        }

        public int held() {
            return held.get();
        }

        public int charged(String id) {
            return charged.getOrDefault(id, new AtomicInteger()).get();
        }

        @WithDistributedLock(key = "'order:' + #id", waitTime = "1m")
        public void ship(int id) throws InterruptedException {
            if (!onVirtualThread()) {
                onPlatformThreads.incrementAndGet();
            }
            int now = inside.computeIfAbsent(id, key -> new AtomicInteger()).incrementAndGet();
            mostInside.merge(id, now, Math::max);
            Thread.sleep(1); // a little work while holding the lock
            inside.get(id).decrementAndGet();
            held.incrementAndGet();
        }

        @Idempotent(key = "#id", onInProgress = Idempotent.InProgress.WAIT, waitTime = "1m")
        public String charge(String id) {
            charged.computeIfAbsent(id, key -> new AtomicInteger()).incrementAndGet();
            return "charged " + id;
        }
    }

    @RestController
    static class Api {
        private final Orders orders;

        Api(Orders orders) {
            this.orders = orders;
        }

        @PostMapping("/orders/{id}")
        String ship(@PathVariable("id") int id) throws InterruptedException {
            orders.ship(id);
            return "shipped";
        }

        @PostMapping("/payments/{id}")
        String charge(@PathVariable("id") String id) {
            return orders.charge(id);
        }
    }
}
