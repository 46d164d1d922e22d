package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class IdempotencyGuardTest {
    private Cerberus cerberus;

    @BeforeEach
    void open() {
        cerberus = Cerberus.builder().engine("mem:idem-" + UUID.randomUUID()).build();
    }

    @AfterEach
    void close() {
        cerberus.close();
    }

    private IdempotencyGuard guard(IdempotencyOptions options) {
        return cerberus.idempotency(options);
    }

    record Order(String customer, BigDecimal amount, List<String> items) {}

    @Test
    void aStoreApartFromSqlDatabasesRefusesToCompleteInTheCallersTransactionBeforeAnythingRuns() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().rejectingWhenInProgress());
        IdempotencyKey key = IdempotencyKey.of("charge", "tx-1", "body");
        AtomicInteger runs = new AtomicInteger();
        javax.sql.DataSource nowhere = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {javax.sql.DataSource.class}, (proxy, method, args) -> {
                    throw new AssertionError("no connection is taken");
                });

        assertThatThrownBy(
                        () -> guard.executeInTransaction(key, Duration.ofHours(1), ResultCodec.STRING, nowhere, c -> {
                            runs.incrementAndGet();
                            return "ran";
                        }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not kept in a SQL database")
                .hasMessageContaining("nothing ran");
        java.sql.Connection connection = (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {java.sql.Connection.class}, (proxy, method, args) -> {
                    throw new AssertionError("nothing is sent on the caller's connection");
                });
        try (IdempotencyAttempt<String> attempt = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThatThrownBy(() -> attempt.completeIn(connection, "ran"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("cannot join your transaction");
            assertThatThrownBy(() -> attempt.failIn(connection, new IllegalStateException("declined")))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("or fail(error, true) after the commit");
            assertThatThrownBy(() -> attempt.completeNotKeptIn(connection, "too large"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("or completeNotKept(why) after the commit");
        }
        assertThat(runs).hasValue(0);
        assertThat(guard.execute(key, Duration.ofHours(1), () -> "after").status())
                .as("the refused attempt was not settled, so closing it released the key")
                .isEqualTo(Outcome.Status.EXECUTED);
    }

    @Test
    void keysAreCanonicalWhateverTheOrderAndNumberSpelling() {
        Map<String, Object> first = new LinkedHashMap<>();
        first.put("order", 42);
        first.put("amount", 1);
        Map<String, Object> second = new LinkedHashMap<>();
        second.put("amount", 1.0);
        second.put("order", 42L);
        assertThat(IdempotencyKey.ofContent("charge", first).id())
                .isEqualTo(IdempotencyKey.ofContent("charge", second).id());
        assertThat(IdempotencyKey.ofContent("charge", new Order("ann", new BigDecimal("10.50"), List.of("a")))
                        .id())
                .isEqualTo(IdempotencyKey.ofContent(
                                "charge", Map.of("customer", "ann", "amount", 10.5, "items", List.of("a")))
                        .id());
        assertThat(IdempotencyKey.ofContent("refund", first).id())
                .as("another operation")
                .isNotEqualTo(IdempotencyKey.ofContent("charge", first).id());
        assertThat(IdempotencyKey.ofContent("charge", List.of(1, 2)).id())
                .as("lists keep order")
                .isNotEqualTo(IdempotencyKey.ofContent("charge", List.of(2, 1)).id());
        assertThat(IdempotencyKey.ofContent("charge", first).id())
                .startsWith("v1:")
                .hasSize(3 + 64);
        assertThatThrownBy(() -> IdempotencyKey.ofContent("", first))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 to 256");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("x", Map.of(1, 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("map keys must be strings");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("x", Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** A store that fails on the calls a test chooses. */
    private static final class FlakyStore extends HookedIdempotencyStore {
        volatile boolean claimsFail;
        volatile boolean completionsFail;

        private static EngineUnavailableException down() {
            return new EngineUnavailableException("store down (test)", null);
        }

        @Override
        public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
            if (claimsFail) {
                throw down();
            }
            return super.claim(id, fingerprint, token, lease);
        }

        private final java.util.concurrent.Semaphore completionCalls = new java.util.concurrent.Semaphore(0);
        private final AtomicInteger completions = new AtomicInteger();

        @Override
        public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
            completions.incrementAndGet();
            completionCalls.release();
            if (completionsFail) {
                throw down();
            }
            return super.complete(id, token, result, failure, retention);
        }

        int completionCalls() {
            return completions.get();
        }

        /** Waits until the store has been asked to complete {@code calls} times (failing the test after 10 s). */
        void awaitCompletionCalls(int calls) {
            try {
                if (!completionCalls.tryAcquire(calls, 10, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new AssertionError("the guard did not try to complete " + calls + " times within 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void aStoreThatIsDownFailsClosedByDefaultAndRunsUnguardedWhenFailingOpen() throws Exception {
        FlakyStore flaky = new FlakyStore();
        flaky.claimsFail = true;
        AtomicInteger runs = new AtomicInteger();
        IdempotencyKey key = IdempotencyKey.ofContent("charge", "store-down");
        try (IdempotencyGuard closed = new IdempotencyGuard(flaky, "ns", "test-store", IdempotencyOptions.defaults())) {
            assertThatThrownBy(() -> closed.execute(key, Duration.ofHours(1), () -> "ran " + runs.incrementAndGet()))
                    .isInstanceOf(IdempotencyStoreUnavailableException.class)
                    .hasMessageContaining("after 3 tries")
                    .hasMessageContaining("did not run");
            assertThat(runs).hasValue(0);
        }
        try (IdempotencyGuard open = new IdempotencyGuard(
                flaky, "ns", "test-store", IdempotencyOptions.defaults().failingOpen())) {
            Outcome<String> outcome = open.execute(key, Duration.ofHours(1), () -> "ran " + runs.incrementAndGet());
            assertThat(outcome.status()).isEqualTo(Outcome.Status.UNGUARDED);
            assertThat(runs).hasValue(1);
            assertThat(open.unguardedRuns()).isEqualTo(1);
        }
    }

    @Test
    void aResultThatCannotBeStoredAfterTheWorkIsAnErrorNotASilentRerun() throws Exception {
        FlakyStore flaky = new FlakyStore();
        flaky.completionsFail = true;
        AtomicInteger runs = new AtomicInteger();
        // the completion is tried for as long as the claim lasts: a short lease keeps the test short
        IdempotencyOptions options =
                IdempotencyOptions.defaults().rejectingWhenInProgress().withLease(Duration.ofMillis(600));
        try (IdempotencyGuard guard = new IdempotencyGuard(flaky, "ns", "test-store", options)) {
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "completion-fails");
            long start = System.nanoTime();
            assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), () -> "ran " + runs.incrementAndGet()))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("ran, but its result could not be stored");
            assertThat(runs).hasValue(1);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("tried until the claim's lease ran out")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(600));
            assertThat(flaky.completionCalls())
                    .as("tries, past the default three")
                    .isGreaterThan(3);
        }
    }

    @Test
    void aCompletionTheStoreMissesIsTriedAgainWhileTheClaimLastsSoTheOperationIsNotRunTwice() throws Exception {
        FlakyStore flaky = new FlakyStore();
        AtomicInteger runs = new AtomicInteger();
        IdempotencyOptions options =
                IdempotencyOptions.defaults().rejectingWhenInProgress().withLease(Duration.ofSeconds(10));
        try (IdempotencyGuard guard = new IdempotencyGuard(flaky, "ns", "test-store", options)) {
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "store-back-within-the-lease");
            Outcome<String> outcome = guard.execute(key, Duration.ofHours(1), () -> {
                flaky.completionsFail =
                        true; // the store goes down while the operation runs, for longer than three tries
                Thread thread = new Thread(() -> {
                    flaky.awaitCompletionCalls(6);
                    flaky.completionsFail = false;
                });
                thread.start();
                return "ran " + runs.incrementAndGet();
            });

            assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(flaky.completionCalls())
                    .as("tries, past the default three")
                    .isGreaterThanOrEqualTo(6);
            assertThat(guard.execute(key, Duration.ofHours(1), () -> "ran " + runs.incrementAndGet())
                            .value())
                    .isEqualTo("ran 1");
            assertThat(runs).hasValue(1);
        }
    }

    @Test
    void jsonWithoutAProviderOnTheClassPathSaysWhatToAdd() {
        assertThatThrownBy(() -> ResultCodec.json(Order.class))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("io.cerberus:cerberus-jackson");
    }

    @Test
    void theGuardsOfAClientShareOneRenewalThreadThatEndsWithTheClient() throws Exception {
        Cerberus client = Cerberus.builder()
                .engine("mem:idem-threads-" + UUID.randomUUID())
                .build();
        java.util.Set<Thread> before = renewerThreads();
        for (int i = 0; i < 50; i++) {
            IdempotencyGuard guard = client.idempotency(IdempotencyOptions.defaults());
            guard.execute(IdempotencyKey.ofContent("op", i), Duration.ofMinutes(1), () -> "done");
        }
        java.util.Set<Thread> made = renewerThreads();
        made.removeAll(before);
        assertThat(made).as("50 guards, one thread").hasSize(1);
        client.close();
        Thread thread = made.iterator().next();
        thread.join(5_000);
        assertThat(thread.isAlive()).as("ended with the client").isFalse();
    }

    private static java.util.Set<Thread> renewerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().equals("cerberus-idempotency-renewer"))
                .collect(java.util.stream.Collectors.toCollection(java.util.HashSet::new));
    }
}
