package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Fence;
import io.cerberus.fencing.FencedRows;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The WebFlux fence check in a running reactive application, through real HTTP, with a SQL keeper: the servlet
 * filter's answers (a newer fence admitted and handed to the application, 409 an older one, 400 a malformed one, a
 * request without a fence passed), and 428 and 503 of a filter that requires a fence or whose keeper fails.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = WebFluxFenceCheckFilterTest.Service.class,
        properties = {"spring.main.web-application-type=reactive", "cerberus.engines[0]=mem:webflux-fence-check"})
class WebFluxFenceCheckFilterTest {
    @LocalServerPort
    int port;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> post(String fence, String resource) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ledger"))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (fence != null) {
            request.header(FencedCalls.FENCE_HEADER, fence);
        }
        if (resource != null) {
            request.header(FencedCalls.RESOURCE_HEADER, resource);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anOlderFenceIsRefusedAndANewerOneReachesTheApplication() throws Exception {
        String resource = "account:" + UUID.randomUUID();
        HttpResponse<String> first = post("1:5", resource);
        HttpResponse<String> newer = post("2:3", resource);
        HttpResponse<String> older = post("1:9", resource);

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("admitted 1:5");
        assertThat(newer.body()).as("a larger epoch, a smaller token").isEqualTo("admitted 2:3");
        assertThat(older.statusCode()).isEqualTo(409);
        assertThat(older.headers().firstValue("Content-Type")).contains("application/problem+json");
        assertThat(older.body()).contains("Stale fence").contains("2:3");
    }

    @Test
    void aMalformedFenceIsABadRequestAndARequestWithoutOnePasses() throws Exception {
        assertThat(post("five", "account:1").statusCode()).isEqualTo(400);
        assertThat(post("1:5", null).statusCode())
                .as("a fence without its resource")
                .isEqualTo(400);
        HttpResponse<String> unfenced = post(null, null);
        assertThat(unfenced.statusCode()).isEqualTo(200);
        assertThat(unfenced.body()).isEqualTo("unfenced");
    }

    @Test
    void aFilterThatRequiresAFenceAnswers428AndOneWhoseKeeperFailsAnswers503() {
        MockServerWebExchange bare = MockServerWebExchange.from(MockServerHttpRequest.post("/ledger"));
        new ReactiveFenceCheckFilter((resource, fence) -> {})
                .requiringFence()
                .filter(bare, exchange -> Mono.error(new AssertionError("must not pass")))
                .block(Duration.ofSeconds(5));
        assertThat(bare.getResponse().getStatusCode().value()).isEqualTo(428);

        MockServerWebExchange fenced = MockServerWebExchange.from(MockServerHttpRequest.post("/ledger")
                .header(FencedCalls.FENCE_HEADER, "0:1")
                .header(FencedCalls.RESOURCE_HEADER, "account:1"));
        new ReactiveFenceCheckFilter((resource, fence) -> {
                    throw new IllegalStateException("the fence store is down");
                })
                .filter(fenced, exchange -> Mono.error(new AssertionError("must not pass")))
                .block(Duration.ofSeconds(5));
        assertThat(fenced.getResponse().getStatusCode().value()).isEqualTo(503);
        assertThat(fenced.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
                .contains("Fence keeper unavailable");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Service {
        @Bean
        DataSource fenceStore() {
            DataSource database = new EmbeddedDatabaseBuilder()
                    .setType(EmbeddedDatabaseType.H2)
                    .setName("webflux-fences-" + UUID.randomUUID())
                    .build();
            new JdbcTemplate(database)
                    .execute("CREATE TABLE cerberus_fences (resource VARCHAR(512) PRIMARY KEY,"
                            + " fence_epoch BIGINT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0)");
            return database;
        }

        @Bean
        ReactiveFenceCheckFilter fenceCheck(DataSource fenceStore) {
            return new ReactiveFenceCheckFilter(
                    FencedRows.of("cerberus_fences", "resource").keeper(fenceStore));
        }

        /** Registered as a member class of the configuration. */
        @RestController
        static class Ledger {
            @PostMapping("/ledger")
            Mono<String> post(ServerWebExchange exchange) {
                Fence fence = exchange.getAttribute(FenceCheckFilter.FENCE_ATTRIBUTE);
                return Mono.just(fence == null ? "unfenced" : "admitted " + fence);
            }
        }
    }
}
