package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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

    record Order(String customer, BigDecimal amount, List<String> items) {
    }

    @Test
    void keysAreCanonicalWhateverTheOrderAndNumberSpelling() {
        Map<String, Object> first = new LinkedHashMap<>();
        first.put("order", 42);
        first.put("amount", 1);
        Map<String, Object> second = new LinkedHashMap<>();
        second.put("amount", 1.0);
        second.put("order", 42L);
        assertThat(IdempotencyKey.ofContent("charge", first).id()).isEqualTo(IdempotencyKey.ofContent("charge", second).id());
        assertThat(IdempotencyKey.ofContent("charge", new Order("ann", new BigDecimal("10.50"), List.of("a"))).id())
                .isEqualTo(IdempotencyKey.ofContent("charge", Map.of("customer", "ann", "amount", 10.5, "items", List.of("a"))).id());
        assertThat(IdempotencyKey.ofContent("refund", first).id()).as("another operation").isNotEqualTo(IdempotencyKey.ofContent("charge", first).id());
        assertThat(IdempotencyKey.ofContent("charge", List.of(1, 2)).id()).as("lists keep order")
                .isNotEqualTo(IdempotencyKey.ofContent("charge", List.of(2, 1)).id());
        assertThat(IdempotencyKey.ofContent("charge", first).id()).startsWith("v1:").hasSize(3 + 64);
        assertThatThrownBy(() -> IdempotencyKey.ofContent("", first)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 to 256");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("x", Map.of(1, 2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("map keys must be strings");
        assertThatThrownBy(() -> IdempotencyKey.ofContent("x", Double.NaN)).isInstanceOf(IllegalArgumentException.class);
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

        @Override
        public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
            if (completionsFail) {
                throw down();
            }
            return super.complete(id, token, result, failure, retention);
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
                    .isInstanceOf(IdempotencyStoreUnavailableException.class).hasMessageContaining("after 3 tries")
                    .hasMessageContaining("did not run");
            assertThat(runs).hasValue(0);
        }
        try (IdempotencyGuard open = new IdempotencyGuard(flaky, "ns", "test-store", IdempotencyOptions.defaults().failingOpen())) {
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
        try (IdempotencyGuard guard = new IdempotencyGuard(flaky, "ns", "test-store", IdempotencyOptions.defaults().rejectingWhenInProgress())) {
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "completion-fails");
            assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), () -> "ran " + runs.incrementAndGet()))
                    .isInstanceOf(IdempotencyCompletionException.class).hasMessageContaining("ran, but its result could not be stored");
            assertThat(runs).hasValue(1);
            assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), () -> "ran " + runs.incrementAndGet()))
                    .as("the key stays claimed until its lease ends").isInstanceOf(OperationInProgressException.class);
        }
    }

    @Test
    void jsonWithoutAProviderOnTheClassPathSaysWhatToAdd() {
        assertThatThrownBy(() -> ResultCodec.json(Order.class)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("io.cerberus:cerberus-jackson");
    }

    @Test
    void theGuardsOfAClientShareOneRenewalThreadThatEndsWithTheClient() throws Exception {
        Cerberus client = Cerberus.builder().engine("mem:idem-threads-" + UUID.randomUUID()).build();
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
