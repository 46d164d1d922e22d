package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import reactor.core.publisher.Mono;

/**
 * Cerberus's exceptions answered with their HTTP status by the auto-configured handler, in running
 * servlet and WebFlux applications through real HTTP: a busy lock 409, an unreachable engine 503
 * with Retry-After, as problem details; the application's own handler first; off by property.
 */
class ErrorStatusesTest {
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aLockStillBusyAfterItsWaitIs409AsAProblemDetail() throws Exception {
        try (ConfigurableApplicationContext app = start(App.class, WebApplicationType.SERVLET)) {
            HttpResponse<String> busy = whileHeld(app, "order:7", () -> get(app, "/orders/7"));

            assertThat(busy.statusCode()).isEqualTo(409);
            assertThat(busy.headers().firstValue("Content-Type")).contains("application/problem+json");
            assertThat(busy.body())
                    .contains("\"status\":409")
                    .contains("\"title\":\"Lock busy\"")
                    .as("no lock name to the client")
                    .doesNotContain("order:7");
            assertThat(get(app, "/orders/7").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void anUnreachableEngineIs503WithRetryAfter() throws Exception {
        try (ConfigurableApplicationContext app = start(App.class, WebApplicationType.SERVLET)) {
            HttpResponse<String> down = get(app, "/down");

            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.headers().firstValue("Retry-After")).contains("5");
            assertThat(down.headers().firstValue("Content-Type")).contains("application/problem+json");
            assertThat(down.body())
                    .contains("\"status\":503")
                    .as("no engine URI to the client")
                    .doesNotContain("cerberus-not-a-directory");
        }
    }

    @Test
    void theApplicationsOwnHandlersAnswerFirst() throws Exception {
        try (ConfigurableApplicationContext app = start(OwnHandlerApp.class, WebApplicationType.SERVLET)) {
            HttpResponse<String> busy = whileHeld(app, "order:8", () -> get(app, "/orders/8"));

            assertThat(busy.statusCode()).isEqualTo(423);
            assertThat(busy.body()).contains("mine: order:8");
            assertThat(get(app, "/down").statusCode())
                    .as("an exception the application does not handle still gets the starter's answer")
                    .isEqualTo(503);
        }
    }

    @Test
    void anApplicationsCatchAllHandlerAnswersFirstToo() throws Exception {
        try (ConfigurableApplicationContext app = start(CatchAllApp.class, WebApplicationType.SERVLET)) {
            HttpResponse<String> busy = whileHeld(app, "order:10", () -> get(app, "/orders/10"));

            assertThat(busy.statusCode()).isEqualTo(500);
            assertThat(busy.body()).contains("caught: LockNotAcquiredException");
        }
    }

    @Test
    void offByPropertyTheyStay500() throws Exception {
        try (ConfigurableApplicationContext app =
                start(App.class, WebApplicationType.SERVLET, "cerberus.web.error-statuses.enabled=false")) {
            assertThat(app.containsBean("cerberusErrorStatuses")).isFalse();
            assertThat(whileHeld(app, "order:9", () -> get(app, "/orders/9")).statusCode())
                    .isEqualTo(500);
        }
    }

    @Test
    void aWebFluxApplicationGetsTheSameAnswers() throws Exception {
        try (ConfigurableApplicationContext app = start(App.class, WebApplicationType.REACTIVE)) {
            HttpResponse<String> busy = whileHeld(app, "room:3", () -> get(app, "/rooms/3"));
            HttpResponse<String> down = get(app, "/down");

            assertThat(busy.statusCode()).isEqualTo(409);
            assertThat(busy.body()).contains("\"title\":\"Lock busy\"");
            assertThat(get(app, "/rooms/3").statusCode()).isEqualTo(200);
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.headers().firstValue("Retry-After")).contains("5");
        }
    }

    private static ConfigurableApplicationContext start(
            Class<?> application, WebApplicationType type, String... properties) {
        return new SpringApplicationBuilder(application)
                .web(type)
                .properties("server.port=0", "cerberus.engines[0]=mem:error-statuses")
                .properties(properties)
                .run();
    }

    private interface Call {
        HttpResponse<String> send() throws Exception;
    }

    /** Sends the request while this thread holds the lock, so the application's call finds it busy. */
    private static HttpResponse<String> whileHeld(ConfigurableApplicationContext app, String name, Call call)
            throws Exception {
        DistributedLock lock = app.getBean(Cerberus.class).lock(name);
        lock.lock();
        try {
            return call.send();
        } finally {
            lock.unlock();
        }
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
        String port = app.getEnvironment().getProperty("local.server.port");
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(20))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Service
    static class Orders {
        @io.cerberus.spring.WithDistributedLock(key = "'order:' + #id")
        public String ship(long id) {
            return "shipped " + id;
        }

        @io.cerberus.spring.WithDistributedLock(key = "'room:' + #id")
        public Mono<String> book(long id) {
            return Mono.just("booked " + id);
        }
    }

    @RestController
    static class Api {
        private final Orders orders;

        Api(Orders orders) {
            this.orders = orders;
        }

        @GetMapping("/orders/{id}")
        String ship(@PathVariable long id) {
            return orders.ship(id);
        }

        @GetMapping("/rooms/{id}")
        Mono<String> book(@PathVariable long id) {
            return orders.book(id);
        }

        /** A real client on a file: engine whose directory cannot be made (a file is in the way): the engine's own exception. */
        @GetMapping("/down")
        String down() throws IOException {
            Path inTheWay = Files.createTempFile("cerberus-not-a-directory", "");
            try (Cerberus unreachable = Cerberus.connect("file:" + inTheWay.resolve("locks"))) {
                return unreachable.currentEngine();
            } finally {
                Files.delete(inTheWay);
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({Orders.class, Api.class})
    static class App {}

    @RestControllerAdvice
    static class OwnHandler {
        @ExceptionHandler(LockNotAcquiredException.class)
        ProblemDetail mine(LockNotAcquiredException e) {
            return ProblemDetail.forStatusAndDetail(HttpStatus.LOCKED, "mine: " + e.lockName());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({Orders.class, Api.class, OwnHandler.class})
    static class OwnHandlerApp {}

    @RestControllerAdvice
    static class CatchAll {
        @ExceptionHandler(Exception.class)
        ProblemDetail caught(Exception e) {
            return ProblemDetail.forStatusAndDetail(
                    HttpStatus.INTERNAL_SERVER_ERROR, "caught: " + e.getClass().getSimpleName());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({Orders.class, Api.class, CatchAll.class})
    static class CatchAllApp {}
}
