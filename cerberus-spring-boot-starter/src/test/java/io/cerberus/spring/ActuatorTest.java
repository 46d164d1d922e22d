package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Health per engine, the locks endpoint and the metrics, through the actuator of a running application. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = ActuatorTest.App.class,
        properties = {
            "cerberus.namespace=actuated",
            "management.endpoints.web.exposure.include=health,cerberus,metrics",
            "management.endpoint.health.show-details=always"
        })
class ActuatorTest {
    @TempDir
    static Path directory;

    @DynamicPropertySource
    static void engines(DynamicPropertyRegistry registry) {
        registry.add("cerberus.engines[0]", () -> "mem:actuator");
        registry.add("cerberus.engines[1]", () -> "file:" + directory);
    }

    @LocalServerPort
    int port;

    @Autowired
    Cerberus cerberus;

    @Autowired
    MeterRegistry registry;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void everyEngineHasAHealthIndicator() throws Exception {
        JsonNode health = get("/actuator/health/cerberus");
        assertThat(health.path("status").asText()).isEqualTo("UP");
        assertThat(health.path("components").path("mem").path("status").asText())
                .isEqualTo("UP");
        assertThat(health.path("components")
                        .path("mem")
                        .path("details")
                        .path("current")
                        .asBoolean())
                .isTrue();
        assertThat(health.path("components")
                        .path("file")
                        .path("details")
                        .path("uri")
                        .asText())
                .isEqualTo("file:" + directory);
        assertThat(health.path("components")
                        .path("file")
                        .path("details")
                        .path("current")
                        .asBoolean())
                .isFalse();
    }

    @Test
    void theEndpointListsTheHeldLocksOfEveryEngine() throws Exception {
        try (Lease order = cerberus.lock("order:42").acquire(Duration.ZERO);
                Lease other = cerberus.lock("report").acquire(Duration.ZERO)) {
            JsonNode all = get("/actuator/cerberus");
            assertThat(all.path("namespace").asText()).isEqualTo("actuated");
            assertThat(all.path("currentEngine").asText()).isEqualTo("mem");
            JsonNode mem = all.path("engines").path("mem");
            assertThat(mem.path("locks")).hasSize(2);
            assertThat(mem.path("locks").get(1).path("fencingToken").asLong()).isEqualTo(other.fencingToken());
            assertThat(mem.path("locks").get(0).path("name").asText()).isEqualTo("order:42");
            assertThat(mem.path("locks").get(0).path("fencingToken").asLong()).isEqualTo(order.fencingToken());
            assertThat(mem.path("locks").get(0).path("leaseRemainingMillis").asLong())
                    .isPositive();
            assertThat(all.path("engines").path("file").path("locks")).isEmpty();

            JsonNode prefixed = get("/actuator/cerberus/mem?prefix=order");
            assertThat(prefixed.path("locks")).hasSize(1);
            assertThat(prefixed.path("uri").asText()).isEqualTo("mem:actuator");
        }
        assertThat(get("/actuator/cerberus/mem").path("locks")).isEmpty();
        assertThat(http.send(
                                HttpRequest.newBuilder(uri("/actuator/cerberus/nosuch"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void theEndpointIsReadOnly() throws Exception {
        HttpResponse<String> delete = http.send(
                HttpRequest.newBuilder(uri("/actuator/cerberus/mem")).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(delete.statusCode()).isEqualTo(405);
    }

    @Test
    void metricsGoToTheApplicationsRegistry() throws Exception {
        cerberus.lock("metered").acquire(Duration.ZERO).close();
        assertThat(registry.find("cerberus.lock.acquire")
                        .tag("engine", "mem")
                        .tag("outcome", "granted")
                        .timer())
                .isNotNull()
                .satisfies(timer -> assertThat(timer.count()).isPositive());
        assertThat(get("/actuator/metrics/cerberus.lock.held").path("name").asText())
                .isEqualTo("cerberus.lock.held");
        assertThat(registry).isNotSameAs(Metrics.globalRegistry);
    }

    private JsonNode get(String path) throws Exception {
        HttpResponse<String> response =
                http.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(path + ": " + response.body()).isEqualTo(200);
        return json.readTree(response.body());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {}
}
