package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The health of Redis engines whose servers may evict keys, on real redis-servers: an eviction
 * policy the configuration accepted is UP with a warning; one that appears behind the engine's back
 * on a server it was not accepted for is DOWN, naming the policy.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = ActuatorTest.App.class,
        properties = {
            "management.endpoints.web.exposure.include=health",
            "management.endpoint.health.show-details=always"
        })
class ActuatorEvictionTest {
    private static RedisServer evicting;
    private static RedisServer strict;

    @DynamicPropertySource
    static void engines(DynamicPropertyRegistry registry) {
        evicting = RedisServer.start("--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru");
        strict = RedisServer.start();
        registry.add("cerberus.engines[0]", () -> evicting.uri() + "?acceptEviction=true");
        registry.add("cerberus.engines[1]", strict::uri);
    }

    @AfterAll
    static void stop() {
        evicting.close();
        strict.close();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void anAcceptedEvictionPolicyIsUpWithAWarning() throws Exception {
        JsonNode redis = health().path("components").path("redis");
        assertThat(redis.path("status").asText()).isEqualTo("UP");
        assertThat(redis.path("details").path("warnings").toString()).contains("volatile-lru");
    }

    @Test
    void anEvictionPolicySetBehindTheEnginesBackIsDownNamingIt() throws Exception {
        assertThat(health().path("components").path("redis2").path("status").asText())
                .isEqualTo("UP");
        RespQuery.send(strict.port(), "CONFIG", "SET", "maxmemory", "64mb");
        RespQuery.send(strict.port(), "CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
        try {
            JsonNode redis2 = health().path("components").path("redis2");
            assertThat(redis2.path("status").asText()).isEqualTo("DOWN");
            assertThat(redis2.path("details").path("error").asText())
                    .contains("UnsafeEngineException")
                    .contains("allkeys-lru")
                    .contains("acceptEviction");
        } finally {
            RespQuery.send(strict.port(), "CONFIG", "SET", "maxmemory-policy", "noeviction");
        }
        assertThat(health().path("components").path("redis2").path("status").asText())
                .isEqualTo("UP");
    }

    private JsonNode health() throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/cerberus"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return new ObjectMapper().readTree(response.body());
    }
}
