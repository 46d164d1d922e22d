package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/** The README check fails when an example is missing or no longer compiles, not only when it misbehaves. */
class ReadmeExamplesTest {
    private static final String LOCK = """
            ```java
            try (Cerberus cerberus = Cerberus.connect("file:/var/lock/myapp")) {
                cerberus.lock("order:42").lock();
            }
            ```
            """;
    private static final String IDEMPOTENCY = """
            ```java
            Outcome<String> outcome = cerberus.idempotency(IdempotencyOptions.defaults())
                    .execute(IdempotencyKey.ofContent("charge", 42), Duration.ofDays(1), () -> "receipt");
            ```
            """;
    private static final String ENGINES = """
            ```java
            Cerberus.builder().engine("mem:").failover(FailoverPolicy.after(Duration.ofSeconds(2))).build();
            ```
            """;

    private static final String ASYNC = """
            ```java
            CompletableFuture<Void> written = cerberus.lock("report").acquireAsync(Duration.ofSeconds(5))
                    .thenCompose(lease -> lease.releaseAsync());
            ```
            """;
    private static final String LEADERSHIP = """
            ```java
            Leadership billing = cerberus.leadership("billing").start();
            ```
            """;
    private static final String EXCLUSIVE = """
            ```java
            cerberus.runExclusively("reminders", Duration.ZERO, lease -> reminders.send(lease.fencingToken()));
            ```
            """;
    private static final String FENCING = """
            ```java
            FencedRows.of("accounts", "id").update(connection, new Fence(0, 1), 42, "balance = 0");
            ```
            """;
    private static final String SEMAPHORE = """
            ```java
            try (Permits permit = cerberus.semaphore("partner-api", 4).acquire(1, Duration.ofSeconds(1))) {
                partner.call(request);
            }
            ```
            """;

    @Test
    void theProjectReadmeHasTheEightExamplesAndTheyCompile() throws Exception {
        String readme = Files.readString(ReadmeExamples.readme().orElseThrow());
        assertThat(ReadmeExamples.compile(ReadmeExamples.source(readme)).getName())
                .isEqualTo("readme.Examples");
    }

    @Test
    void aReadmeWithoutTheIdempotencyExampleIsRefusedByName() {
        assertThatThrownBy(() -> ReadmeExamples.source(LOCK + ENGINES))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the idempotency example");
    }

    @Test
    void aReadmeWithoutTheScheduledJobExampleIsRefusedByName() {
        assertThatThrownBy(() -> ReadmeExamples.source(LOCK + IDEMPOTENCY + ENGINES + ASYNC + LEADERSHIP))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the scheduled job example");
    }

    @Test
    void aReadmeWithoutTheFencingExampleIsRefusedByName() {
        assertThatThrownBy(() -> ReadmeExamples.source(LOCK + IDEMPOTENCY + ENGINES + ASYNC + LEADERSHIP + EXCLUSIVE))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the fencing example");
    }

    @Test
    void aReadmeWithoutTheSemaphoreExampleIsRefusedByName() {
        assertThatThrownBy(() ->
                        ReadmeExamples.source(LOCK + IDEMPOTENCY + ENGINES + ASYNC + LEADERSHIP + EXCLUSIVE + FENCING))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the semaphore and multi-lock example");
    }

    @Test
    void aReadmeWithoutTheLeadershipExampleIsRefusedByName() {
        assertThatThrownBy(() -> ReadmeExamples.source(LOCK + IDEMPOTENCY + ENGINES + ASYNC))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the leadership example");
    }

    @Test
    void aReadmeWithoutTheAsyncExampleIsRefusedByName() {
        assertThatThrownBy(() -> ReadmeExamples.source(LOCK + IDEMPOTENCY + ENGINES))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the async example");
    }

    @Test
    void anExampleThatNoLongerCompilesFailsWithTheCompilersMessage() {
        String renamed = (LOCK + IDEMPOTENCY + ENGINES + ASYNC + LEADERSHIP + EXCLUSIVE + FENCING + SEMAPHORE)
                .replace("cerberus.lock(", "cerberus.mutex(\"x\"); cerberus.lock(");
        assertThatThrownBy(() -> ReadmeExamples.compile(ReadmeExamples.source(renamed)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("do not compile")
                .hasMessageContaining("mutex");
    }
}
