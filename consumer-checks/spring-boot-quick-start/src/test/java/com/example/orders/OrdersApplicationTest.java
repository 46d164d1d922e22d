package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The quick start of SPRING.md runs as its reader builds it (on a JVM-local engine instead of its
 * Redis): an order ships, and while another holder has its lock the request is answered 409.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "cerberus.engines=mem:")
class OrdersApplicationTest {
    @LocalServerPort
    int port;

    @Autowired
    Cerberus cerberus;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void anOrderShipsAndABusyOneIs409() throws Exception {
        assertThat(ship(42).body()).isEqualTo("order 42 shipped");

        DistributedLock lock = cerberus.lock("order:43");
        lock.lock();
        try {
            HttpResponse<String> busy = ship(43);
            assertThat(busy.statusCode()).isEqualTo(409);
            assertThat(busy.headers().firstValue("Content-Type")).contains("application/problem+json");
        } finally {
            lock.unlock();
        }
    }

    private HttpResponse<String> ship(long orderId) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/" + orderId + "/ship"))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
