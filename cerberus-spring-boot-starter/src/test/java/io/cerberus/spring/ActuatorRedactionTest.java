package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.FreePorts;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** An engine password shows in no actuator output: health, its details and errors, the locks endpoint. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = ActuatorTest.App.class,
        properties = {
            "cerberus.namespace=redacted",
            "management.endpoints.web.exposure.include=health,cerberus",
            "management.endpoint.health.show-details=always"
        })
class ActuatorRedactionTest {
    private static final String SECRET = "s3cret-in-uri";
    private static final int CLOSED_PORT = FreePorts.next();

    @DynamicPropertySource
    static void engines(DynamicPropertyRegistry registry) {
        registry.add("cerberus.engines[0]", () -> "mem:redaction");
        // a standby that is down: its URI and its connection error are shown by health and the locks endpoint
        registry.add("cerberus.engines[1]", () -> "redis://" + SECRET + "@127.0.0.1:" + CLOSED_PORT);
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void healthAndTheLocksEndpointShowTheStandbyWithoutItsPassword() throws Exception {
        String health = get("/actuator/health");
        String locks = get("/actuator/cerberus");

        assertThat(health).contains("redis://****@127.0.0.1:" + CLOSED_PORT).doesNotContain(SECRET);
        assertThat(locks).contains("redis://****@127.0.0.1:" + CLOSED_PORT).doesNotContain(SECRET);
    }

    private String get(String path) throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return response.body();
    }
}
