package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.fencing.FencedRows;
import io.cerberus.testkit.Poll;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;

/**
 * A fence that travels: a client's calls made under a lease carry its fence ({@link FencedCalls},
 * {@link FencingRequestInterceptor}), and the protected service ({@link FenceCheckFilter} on a SQL
 * {@link io.cerberus.fencing.FenceKeeper}) refuses the late call of a holder whose lock has passed on.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = FencedCallsTest.Service.class,
        properties = "cerberus.engines[0]=mem:fenced-calls-service")
@SuppressWarnings("try") // a scope is used by being open, not by being referenced
class FencedCallsTest {
    @LocalServerPort
    int port;

    @Autowired
    Service.Ledger ledger;

    @Autowired
    Service.Caller caller;

    private final Cerberus client = Cerberus.connect("mem:fenced-calls-" + UUID.randomUUID());
    private RestClient http;

    @BeforeEach
    void client() {
        http = RestClient.builder()
                .baseUrl("http://127.0.0.1:" + port)
                .requestInterceptor(new FencingRequestInterceptor())
                .build();
        ledger.fences.clear();
        ledger.resources.clear();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private void post(String path) {
        http.post().uri(path).retrieve().toBodilessEntity();
    }

    @Test
    void theLateCallOfAHolderWhoseLockPassedOnIsRefused() throws Exception {
        Lease paused = client.lock("account:42").acquire(Duration.ofSeconds(5), Duration.ofMillis(300));
        try (FencedCalls.Scope scope = FencedCalls.under(paused)) {
            post("/ledger");
        }
        assertThat(ledger.fences).containsExactly(Fence.of(paused));
        Poll.until("the first lease ran out", Duration.ofSeconds(10), () -> !paused.isValid());
        try (Lease next = client.lock("account:42").acquire(Duration.ofSeconds(5));
                FencedCalls.Scope scope = FencedCalls.under(next)) {
            post("/ledger");
            assertThat(ledger.fences).last().isEqualTo(Fence.of(next));
        }
        try (FencedCalls.Scope scope = FencedCalls.under(paused)) {
            assertThatThrownBy(() -> post("/ledger"))
                    .isInstanceOfSatisfying(
                            HttpClientErrorException.Conflict.class,
                            refused -> assertThat(refused.getResponseBodyAsString())
                                    .contains("Stale fence")
                                    .contains("refused by"));
        }
        assertThat(ledger.fences).as("the late call never reached the service").hasSize(2);
    }

    @Test
    void aWebClientCallCarriesTheFenceOfItsReactorContext() throws Exception {
        WebClient reactive = WebClient.builder()
                .clientConnector(new JdkClientHttpConnector())
                .baseUrl("http://127.0.0.1:" + port)
                .filter(new FencingExchangeFilter())
                .build();
        Lease paused = client.lock("account:7").acquire(Duration.ofSeconds(5), Duration.ofMillis(300));
        Mono<ResponseEntity<Void>> late = reactive.post()
                .uri("/ledger")
                .retrieve()
                .toBodilessEntity()
                .contextWrite(FencingExchangeFilter.under(paused));
        late.block(Duration.ofSeconds(10));
        assertThat(ledger.fences).containsExactly(Fence.of(paused));
        Poll.until("the first lease ran out", Duration.ofSeconds(10), () -> !paused.isValid());
        try (Lease next = client.lock("account:7").acquire(Duration.ofSeconds(5))) {
            reactive.post()
                    .uri("/ledger")
                    .retrieve()
                    .toBodilessEntity()
                    .contextWrite(FencingExchangeFilter.under(next))
                    .block(Duration.ofSeconds(10));
        }
        assertThatThrownBy(() -> late.block(Duration.ofSeconds(10)))
                .isInstanceOf(WebClientResponseException.Conflict.class);
        assertThat(ledger.fences).hasSize(2);
    }

    @Test
    void aDistributedLockOrExclusiveRunMethodsCallsCarryItsLeasesFence() {
        caller.credit("annotated", http); // a resource no other engine in this test fences
        caller.nightly(http);
        assertThat(ledger.fences)
                .hasSize(2)
                .allSatisfy(fence -> assertThat(fence).isNotNull());
        assertThat(ledger.resources).containsExactly("account:annotated", "nightly");
        assertThat(FencedCalls.current()).as("the scope ended with the method").isEmpty();
    }

    @Test
    void withoutAFenceACallPassesUnlessTheServiceRequiresOne() {
        post("/ledger");
        assertThat(ledger.fences).containsExactly((Fence) null);
        assertThatThrownBy(() -> post("/strict"))
                .isInstanceOfSatisfying(
                        HttpClientErrorException.class,
                        e -> assertThat(e.getStatusCode().value()).isEqualTo(428));
    }

    @Test
    void aMalformedFenceIsABadRequestAndAKeeperThatFailsIsUnavailable() {
        assertThatThrownBy(() -> RestClient.create("http://127.0.0.1:" + port)
                        .post()
                        .uri("/ledger")
                        .header(FencedCalls.FENCE_HEADER, "not-a-fence")
                        .header(FencedCalls.RESOURCE_HEADER, "account:42")
                        .retrieve()
                        .toBodilessEntity())
                .isInstanceOf(HttpClientErrorException.BadRequest.class);
        try (FencedCalls.Scope scope = FencedCalls.under(new Fence(0, 1), "account:42")) {
            assertThatThrownBy(() -> post("/broken")).isInstanceOf(HttpServerErrorException.ServiceUnavailable.class);
        }
        assertThatThrownBy(() -> FencedCalls.under(new Fence(0, 1), ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 to 512 characters");
    }

    @Test
    void scopesNestAndCloseBackToTheOuterOne() {
        try (FencedCalls.Scope outer = FencedCalls.under(new Fence(0, 1), "a")) {
            try (FencedCalls.Scope inner = FencedCalls.under(new Fence(0, 2), "b")) {
                assertThat(FencedCalls.current().orElseThrow().resource()).isEqualTo("b");
            }
            assertThat(FencedCalls.current().orElseThrow().resource()).isEqualTo("a");
        }
        assertThat(FencedCalls.current()).isEmpty();
    }

    @Configuration
    @EnableAutoConfiguration
    static class Service {
        @Bean
        DataSource fenceStore() {
            DataSource database = new EmbeddedDatabaseBuilder()
                    .setType(EmbeddedDatabaseType.H2)
                    .setName("fences-" + UUID.randomUUID())
                    .build();
            new JdbcTemplate(database)
                    .execute("CREATE TABLE cerberus_fences (resource VARCHAR(512) PRIMARY KEY,"
                            + " fence_epoch BIGINT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0)");
            return database;
        }

        @Bean
        FilterRegistrationBean<FenceCheckFilter> fenceCheck(DataSource fenceStore) {
            FilterRegistrationBean<FenceCheckFilter> registration = new FilterRegistrationBean<>(new FenceCheckFilter(
                    FencedRows.of("cerberus_fences", "resource").keeper(fenceStore)));
            registration.addUrlPatterns("/ledger");
            return registration;
        }

        @Bean
        FilterRegistrationBean<FenceCheckFilter> strictFenceCheck(DataSource fenceStore) {
            FilterRegistrationBean<FenceCheckFilter> registration = new FilterRegistrationBean<>(new FenceCheckFilter(
                            FencedRows.of("cerberus_fences", "resource").keeper(fenceStore))
                    .requiringFence());
            registration.addUrlPatterns("/strict");
            return registration;
        }

        @Bean
        FilterRegistrationBean<FenceCheckFilter> brokenFenceCheck() {
            FilterRegistrationBean<FenceCheckFilter> registration =
                    new FilterRegistrationBean<>(new FenceCheckFilter((resource, fence) -> {
                        throw new IllegalStateException("the fence store is down");
                    }));
            registration.addUrlPatterns("/broken");
            return registration;
        }

        @Bean
        Caller caller() {
            return new Caller();
        }

        /** Calls the ledger from annotated methods. */
        static class Caller {
            @WithDistributedLock(key = "'account:' + #id")
            public void credit(String id, RestClient http) {
                http.post().uri("/ledger").retrieve().toBodilessEntity();
            }

            @ExclusiveRun(name = "nightly")
            public void nightly(RestClient http) {
                http.post().uri("/ledger").retrieve().toBodilessEntity();
            }
        }

        @RestController
        static class Ledger {
            final List<Fence> fences = new CopyOnWriteArrayList<>();
            final List<String> resources = new CopyOnWriteArrayList<>();

            @PostMapping({"/ledger", "/strict", "/broken"})
            void post(jakarta.servlet.http.HttpServletRequest request) {
                fences.add((Fence) request.getAttribute(FenceCheckFilter.FENCE_ATTRIBUTE));
                String resource = request.getHeader(FencedCalls.RESOURCE_HEADER);
                if (resource != null) {
                    resources.add(resource);
                }
            }
        }
    }
}
