package io.cerberus.examples.flashsale;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.servlet.context.ServletWebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The flash sale as the README runs it, in one JVM: two instances of the shop on random ports, one
 * real redis-server, 20 buyers alternating between the instances for 3 seconds against a stock of 10.
 */
class FlashSaleTest {
    private static final int STOCK = 10;
    private static final int BUYERS = 20;
    private static final Duration SALE = Duration.ofSeconds(3);

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();
    private static final List<Integer> ports = new ArrayList<>();
    private static RedisClient client;
    private static RedisCommands<String, String> data;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void startTwoInstances() {
        for (int i = 0; i < 2; i++) {
            ConfigurableApplicationContext instance = new SpringApplicationBuilder(FlashSaleApplication.class)
                    .run("--server.port=0", "--flash-sale.redis-uri=" + REDIS.uri(), "--spring.main.banner-mode=off");
            instances.add(instance);
            ports.add(((ServletWebServerApplicationContext) instance)
                    .getWebServer()
                    .getPort());
        }
        client = RedisClient.create(REDIS.uri());
        StatefulRedisConnection<String, String> connection = client.connect();
        data = connection.sync();
    }

    @AfterAll
    static void stop() {
        instances.forEach(ConfigurableApplicationContext::close);
        if (client != null) {
            client.shutdown();
        }
    }

    @BeforeEach
    void restock() {
        data.set(Shop.STOCK, Integer.toString(STOCK));
        data.del(Shop.SOLD, Payments.CHARGES);
    }

    @Test
    void withoutALockTheShopOversells() throws Exception {
        int answeredSold = rush("/buy");
        long sold = Long.parseLong(data.get(Shop.SOLD));
        assertThat(sold).as("items sold from a stock of " + STOCK).isGreaterThan(STOCK);
        assertThat(answeredSold).isEqualTo((int) sold);
    }

    @Test
    void withTheDistributedLockTheShopSellsExactlyTheStock() throws Exception {
        int answeredSold = rush("/buy-locked");
        assertThat(data.get(Shop.SOLD)).isEqualTo(Integer.toString(STOCK));
        assertThat(data.get(Shop.STOCK)).isEqualTo("0");
        assertThat(answeredSold).isEqualTo(STOCK);
    }

    @Test
    void aBuyerWhoClicksPayThreeTimesIsChargedOnce() throws Exception {
        String key = UUID.randomUUID().toString();
        List<HttpResponse<String>> clicks = new ArrayList<>();
        for (int click = 0; click < 3; click++) {
            clicks.add(pay(ports.get(click % 2), key, "{\"buyer\":\"ann\",\"cents\":1999}"));
        }

        assertThat(data.get(Payments.CHARGES)).isEqualTo("1");
        assertThat(clicks).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo(clicks.get(0).body()).contains("payment-1");
        });
        assertThat(clicks.get(0).headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(clicks.get(1).headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(clicks.get(2).headers().firstValue("Idempotent-Replayed")).contains("true");

        HttpResponse<String> otherAmount = pay(ports.get(0), key, "{\"buyer\":\"ann\",\"cents\":5}");
        assertThat(otherAmount.statusCode()).isEqualTo(422);
        assertThat(pay(ports.get(1), null, "{\"buyer\":\"ann\",\"cents\":1999}").statusCode())
                .isEqualTo(400);
        assertThat(data.get(Payments.CHARGES)).isEqualTo("1");
    }

    /** @return how many requests were answered "sold" */
    private int rush(String path) throws Exception {
        AtomicInteger answeredSold = new AtomicInteger();
        long end = System.nanoTime() + SALE.toNanos();
        ExecutorService buyers = Executors.newFixedThreadPool(BUYERS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int buyer = 0; buyer < BUYERS; buyer++) {
                int first = buyer;
                done.add(buyers.submit(() -> {
                    for (int request = first; System.nanoTime() < end; request++) {
                        URI uri = URI.create("http://127.0.0.1:" + ports.get(request % 2) + path);
                        HttpResponse<String> response = http.send(
                                HttpRequest.newBuilder(uri)
                                        .timeout(Duration.ofSeconds(30))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertThat(response.statusCode()).as(response.body()).isIn(200, 410);
                        if (response.statusCode() == 200) {
                            answeredSold.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> buyer : done) {
                buyer.get(60, TimeUnit.SECONDS);
            }
        } finally {
            buyers.shutdownNow();
        }
        return answeredSold.get();
    }

    private HttpResponse<String> pay(int port, String key, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/pay"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
