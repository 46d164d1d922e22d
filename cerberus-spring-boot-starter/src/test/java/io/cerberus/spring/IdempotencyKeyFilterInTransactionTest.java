package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code cerberus.idempotency.http.transaction=true}: the Idempotency-Key filter runs each guarded request in a
 * transaction of the application's H2 DataSource, where the records are too ({@code jdbc:datasource}). A stored
 * response commits with the request's effects; every other outcome rolls them back and frees the key, so a retry
 * runs once on what was there before; a response whose transaction fails to commit is never sent as a success.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = IdempotencyKeyFilterInTransactionTest.App.class,
        properties = {
            "cerberus.engines=jdbc:datasource",
            "cerberus.idempotency.http.enabled=true",
            "cerberus.idempotency.http.paths=/seats/**",
            "cerberus.idempotency.http.transaction=true",
            "cerberus.idempotency.http.max-stored-response-size=1KB"
        })
class IdempotencyKeyFilterInTransactionTest {
    @LocalServerPort
    int port;

    @Autowired
    Seats seats;

    @Autowired
    JdbcTemplate jdbc;

    private final HttpClient http = HttpClient.newHttpClient();
    private String seat;
    private int completedBefore;

    @BeforeEach
    void reset() {
        seats.mode.set("ok");
        seats.gate.set(null);
        seats.runs.set(0);
        seat = UUID.randomUUID().toString();
        completedBefore = allCompletedRecords();
    }

    @Test
    void aStoredResponseCommitsWithTheEffectAndIsReplayed() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = book(key);
        HttpResponse<String> retry = book(key);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(rows()).isEqualTo(1);
        assertThat(seats.runs).hasValue(1);
    }

    @Test
    void whileTheRequestRunsNeitherItsEffectNorItsResponseIsCommittedAndADuplicateIs409() throws Exception {
        Gate gate = new Gate();
        seats.gate.set(gate);
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<String>> first =
                http.sendAsync(request(key), HttpResponse.BodyHandlers.ofString());
        assertThat(gate.awaitEntered(10_000)).isTrue();

        assertThat(rows()).as("the effect, inserted but not committed").isZero();
        assertThat(completedRecords()).as("no response committed yet").isZero();
        assertThat(book(key).statusCode()).as("the claim is seen at once").isEqualTo(409);
        gate.open();

        assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(rows()).isEqualTo(1);
        assertThat(completedRecords()).isPositive();
        assertThat(book(key).headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(seats.runs).hasValue(1);
    }

    @Test
    void aResponseThatIsNotStoredRollsTheEffectBackSoTheRetryRunsOnce() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("busy");
        assertThat(book(key).statusCode()).isEqualTo(503);
        assertThat(rows()).as("rolled back with the 503").isZero();

        seats.mode.set("ok");
        HttpResponse<String> retry = book(key);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(rows()).isEqualTo(1);
    }

    @Test
    void anExceptionRollsTheEffectBackAndFreesTheKey() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("throw");
        assertThat(book(key).statusCode()).isEqualTo(500);
        assertThat(rows()).isZero();

        seats.mode.set("ok");
        assertThat(book(key).statusCode()).isEqualTo(201);
        assertThat(rows()).isEqualTo(1);
        assertThat(seats.runs).hasValue(2);
    }

    @Test
    void anAnswerAfterAFailedInnerTransactionIsSentButNotStoredAndNothingCommits() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("inner-failure-422");
        HttpResponse<String> refused = book(key);
        assertThat(refused.statusCode()).isEqualTo(422);
        assertThat(rows()).as("the transaction was marked rollback-only").isZero();

        seats.mode.set("ok");
        assertThat(book(key).statusCode())
                .as("run again, not replayed: nothing of the first request committed")
                .isEqualTo(201);
        assertThat(rows()).isEqualTo(1);
    }

    @Test
    void aSuccessWhoseTransactionWasMarkedRollbackOnlyBecomes500() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("inner-failure-200");
        HttpResponse<String> answer = book(key);

        assertThat(answer.statusCode()).isEqualTo(500);
        assertThat(answer.body()).contains("Not committed").contains("rollback-only");
        assertThat(rows()).isZero();
        seats.mode.set("ok");
        assertThat(book(key).statusCode()).isEqualTo(201);
    }

    @Test
    void aCommitThatFailsTakesTheResponseWithItAndTheClientGets500() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("commit-fails");
        HttpResponse<String> answer = book(key);

        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(500);
        assertThat(answer.body()).contains("Not committed").contains("retry with the same Idempotency-Key");
        assertThat(rows()).isZero();
        assertThat(completedRecords())
                .as("the response was rolled back with the effect")
                .isZero();

        seats.mode.set("ok");
        HttpResponse<String> retry = book(key);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(rows()).isEqualTo(1);
    }

    @Test
    void aResponseLargerThanTheStoredSizeIsRecordedAsNotKeptInTheTransaction() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("large");
        HttpResponse<String> first = book(key);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).hasSize(4096);
        // a response past the stored size streams to the client before the commit: the rows come a moment later
        long committedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (rows() == 0 && System.nanoTime() - committedBy < 0) {
            Thread.sleep(5);
        }
        assertThat(rows()).isEqualTo(1);

        HttpResponse<String> duplicate = book(key);
        assertThat(duplicate.statusCode()).isEqualTo(422);
        assertThat(duplicate.body()).contains("Response not kept");
        assertThat(seats.runs).hasValue(1);
    }

    @Test
    void aFailureAfterALargeResponseBeganRollsTheNotKeptRecordBackWithTheEffect() throws Exception {
        String key = UUID.randomUUID().toString();
        seats.mode.set("large-then-throw");
        try {
            book(key); // the client gets a cut response, or a complete one, then the server fails
        } catch (java.io.IOException cut) {
            // a response cut off by the failure
        }
        assertThat(rows()).isZero();

        seats.mode.set("ok");
        // the client may have the whole response before the server fails: until the rollback, the key is in progress
        long freedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        HttpResponse<String> retry = book(key);
        while (retry.statusCode() == 409 && System.nanoTime() - freedBy < 0) {
            Thread.sleep(5);
            retry = book(key);
        }
        assertThat(retry.statusCode())
                .as("the key is free within the lease: its record went with the rollback")
                .isEqualTo(201);
        assertThat(rows()).isEqualTo(1);
    }

    @Test
    void anAsynchronousRequestEndsItsFirstDispatchsTransactionAndStoresItsResponseWhenItEnds() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpRequest later = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/seats/" + seat + "/later"))
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build();
        HttpResponse<String> first = http.send(later, HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> retry = http.send(later, HttpResponse.BodyHandlers.ofString());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(rows()).isEqualTo(1);
    }

    @Test
    void theSettingNeedsTheRecordsInTheApplicationsDataSourceAndAServletApplication() {
        AutoConfigurations all = AutoConfigurations.of(
                CerberusAutoConfiguration.class,
                CerberusWebAutoConfiguration.class,
                CerberusWebFluxAutoConfiguration.class);
        new WebApplicationContextRunner()
                .withConfiguration(all)
                .withPropertyValues(
                        "cerberus.engines=mem:",
                        "cerberus.idempotency.http.enabled=true",
                        "cerberus.idempotency.http.transaction=true")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("the idempotency records must be in the application's DataSource")
                        .hasMessageContaining("the first engine is mem:")
                        .hasMessageContaining("Set cerberus.engines to jdbc:datasource"));
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(all)
                .withPropertyValues(
                        "cerberus.engines=mem:",
                        "cerberus.idempotency.http.enabled=true",
                        "cerberus.idempotency.http.transaction=true")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("which a WebFlux request does not have"));
    }

    private int rows() {
        return jdbc.queryForObject("select count(*) from booking where seat = ?", Integer.class, seat);
    }

    /** @return the records completed by this test's requests */
    private int completedRecords() {
        return allCompletedRecords() - completedBefore;
    }

    private int allCompletedRecords() {
        try {
            return jdbc.queryForObject("select count(*) from cerberus_locks_idem where completed = 1", Integer.class);
        } catch (org.springframework.jdbc.BadSqlGrammarException e) {
            return 0; // the guard makes its table at its first use
        }
    }

    private HttpResponse<String> book(String key) throws Exception {
        return http.send(request(key), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String key) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/seats/" + seat))
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build();
    }

    @Configuration
    @EnableAutoConfiguration
    @org.springframework.transaction.annotation.EnableTransactionManagement
    @Import({Seats.class, Inner.class})
    static class App {
        @Bean
        DataSource dataSource() {
            return new EmbeddedDatabaseBuilder()
                    .setType(EmbeddedDatabaseType.H2)
                    .generateUniqueName(true)
                    .addScript("classpath:io/cerberus/spring/bookings.sql")
                    .build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }
    }

    /** A transactional service the controller calls: joins the request's transaction, and fails on demand. */
    static class Inner {
        @Autowired
        JdbcTemplate jdbc;

        @Transactional
        public void bookThenFail(String seat) {
            jdbc.update("insert into booking (seat) values (?)", seat);
            throw new IllegalStateException("sold out");
        }
    }

    @RestController
    static class Seats {
        final AtomicReference<String> mode = new AtomicReference<>("ok");
        final AtomicReference<Gate> gate = new AtomicReference<>();
        final AtomicInteger runs = new AtomicInteger();

        @Autowired
        JdbcTemplate jdbc;

        @Autowired
        Inner inner;

        @PostMapping("/seats/{seat}/later")
        java.util.concurrent.Callable<ResponseEntity<String>> bookLater(@PathVariable String seat) {
            jdbc.update("insert into booking (seat) values (?)", seat); // in the first dispatch's transaction
            return () -> ResponseEntity.status(201).body("booked " + seat + " later");
        }

        @PostMapping("/seats/{seat}")
        ResponseEntity<String> book(@PathVariable String seat, jakarta.servlet.http.HttpServletResponse response)
                throws java.io.IOException {
            runs.incrementAndGet();
            switch (mode.get()) {
                case "inner-failure-422", "inner-failure-200" -> {
                    try {
                        inner.bookThenFail(seat);
                    } catch (IllegalStateException e) {
                        return ResponseEntity.status(mode.get().endsWith("422") ? 422 : 200)
                                .body(e.getMessage());
                    }
                }
                default -> jdbc.update("insert into booking (seat) values (?)", seat);
            }
            Gate waiting = gate.get();
            if (waiting != null) {
                waiting.enterAndWait();
            }
            switch (mode.get()) {
                case "busy" -> {
                    return ResponseEntity.status(503).body("busy");
                }
                case "throw" -> throw new IllegalStateException("failed after the insert");
                case "large" -> {
                    return ResponseEntity.status(201).body("x".repeat(4096));
                }
                case "large-then-throw" -> {
                    response.setStatus(201);
                    response.getOutputStream()
                            .write("x".repeat(4096).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    response.flushBuffer();
                    throw new IllegalStateException("failed after the response began");
                }
                case "commit-fails" ->
                    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                        @Override
                        public void beforeCommit(boolean readOnly) {
                            throw new IllegalStateException("the commit fails");
                        }
                    });
                default -> {}
            }
            return ResponseEntity.status(201).body("booked " + seat);
        }
    }
}
