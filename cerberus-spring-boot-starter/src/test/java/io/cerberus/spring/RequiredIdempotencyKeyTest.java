package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** A required key, another header name, and the methods that are not guarded. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = RequiredIdempotencyKeyTest.App.class,
        properties = {
            "cerberus.engines=mem:required-key",
            "cerberus.idempotency.http.enabled=true",
            "cerberus.idempotency.http.required=true",
            "cerberus.idempotency.http.header-name=X-Request-Key",
            "cerberus.idempotency.http.replay-header=X-Replayed"
        })
class RequiredIdempotencyKeyTest {
    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aGuardedRequestWithoutTheKeyIs400() throws Exception {
        HttpResponse<String> response =
                send(HttpRequest.newBuilder(uri("/pay")).POST(HttpRequest.BodyPublishers.ofString("x")));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("X-Request-Key");
    }

    @Test
    void theConfiguredHeadersAreUsed() throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri("/pay"))
                .header("X-Request-Key", "k1")
                .POST(HttpRequest.BodyPublishers.ofString("x"));
        assertThat(send(request).headers().firstValue("X-Replayed")).isEmpty();
        HttpResponse<String> replayed = send(request);
        assertThat(replayed.statusCode()).isEqualTo(200);
        assertThat(replayed.headers().firstValue("X-Replayed")).contains("true");
    }

    @Test
    void aMethodThatIsNotGuardedNeedsNoKey() throws Exception {
        assertThat(send(HttpRequest.newBuilder(uri("/pay")).GET()).statusCode()).isEqualTo(200);
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(Payments.class)
    static class App {}

    @RestController
    static class Payments {
        @PostMapping("/pay")
        String pay() {
            return "paid";
        }

        @GetMapping("/pay")
        String status() {
            return "open";
        }
    }
}
