package io.cerberus.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.Outcome;
import io.cerberus.idempotency.ResultNotKeptException;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MemoryIdempotencyStoreTest {
    private static final Duration HOUR = Duration.ofHours(1);

    private static MemoryIdempotencyStore store(long maxRecords, long maxBytes) {
        return new MemoryIdempotencyStore(
                "mem:test", new MemoryIdempotencyStore.Limits(maxRecords, maxBytes), Duration.ofMinutes(1));
    }

    @Test
    void recordsThatAreOverAreSweptSoTheMapDoesNotGrowForEver() throws Exception {
        MemoryIdempotencyStore store =
                new MemoryIdempotencyStore("mem:test", MemoryIdempotencyStore.Limits.DEFAULT, Duration.ofMillis(20));
        for (int i = 0; i < 1000; i++) {
            assertThat(store.claim("ns/k" + i, "f", "t" + i, Duration.ofMillis(500)))
                    .isEmpty(); // outlives the loop
        }
        assertThat(store.size()).isEqualTo(1000);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        // claims (the same one, resent) sweep once the records are over and the interval has passed
        while (store.size() > 1 && System.nanoTime() - deadline < 0) {
            assertThat(store.claim("ns/new", "f", "t", Duration.ofSeconds(30))).isEmpty();
            Thread.sleep(5);
        }
        assertThat(store.size()).as("the 1000 records that were over are gone").isEqualTo(1);
        assertThat(store.read("ns/new")).isPresent();
    }

    @Test
    void aClaimIsRefusedWhileTheStoreHoldsItsMostRecordsAndTakenOnceOneIsGone() {
        MemoryIdempotencyStore store = store(3, 1 << 20);
        for (int i = 0; i < 3; i++) {
            assertThat(store.claim("ns/k" + i, "f", "t" + i, HOUR)).isEmpty();
        }
        assertThatThrownBy(() -> store.claim("ns/k3", "f", "t3", HOUR))
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("mem:test")
                .hasMessageContaining("3 records of at most 3")
                .hasMessageContaining("maxRecords");
        assertThat(store.claim("ns/k0", "f", "t0", HOUR))
                .as("a claim sent again by its owner is not a new record")
                .isEmpty();
        assertThat(store.release("ns/k1", "t1")).isTrue();
        assertThat(store.claim("ns/k3", "f", "t3", HOUR)).isEmpty();
    }

    @Test
    void recordsThatAreOverMakeRoomAtOnceWhenTheStoreIsFull() throws Exception {
        MemoryIdempotencyStore store = store(2, 1 << 20);
        assertThat(store.claim("ns/a", "f", "ta", Duration.ofMillis(50))).isEmpty();
        assertThat(store.claim("ns/b", "f", "tb", Duration.ofMillis(50))).isEmpty();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        Optional<?> claimed = null;
        while (claimed == null && System.nanoTime() - deadline < 0) {
            try {
                claimed = store.claim("ns/c", "f", "tc", HOUR);
            } catch (EngineUnavailableException full) {
                Thread.sleep(10); // the two claims' leases have not run out yet
            }
        }
        // the store keeps two records and held two: an expired one was swept for it, well before the minute's sweep
        assertThat(claimed).as("claimed once the expired records were swept").isEmpty();
        assertThat(store.read("ns/c")).isPresent();
    }

    @Test
    void theBytesOfRecordsAreBoundedAndAResultThatDoesNotFitIsKeptAsRanNotStored() throws Exception {
        String uri = "mem:bounded-" + UUID.randomUUID() + "?maxRecordBytes=64KB";
        try (Cerberus cerberus = Cerberus.connect(uri);
                IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults())) {
            AtomicInteger runs = new AtomicInteger();
            IdempotencyKey big = IdempotencyKey.ofContent("report", "big");
            Outcome<String> first = guard.execute(big, HOUR, () -> "x".repeat(100_000) + runs.incrementAndGet());
            assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThatThrownBy(() -> guard.execute(big, HOUR, () -> "again" + runs.incrementAndGet()))
                    .isInstanceOf(ResultNotKeptException.class);
            assertThat(runs)
                    .as("the operation ran once: no room is no reason to run it twice")
                    .hasValue(1);

            int ran = 0;
            IdempotencyStoreUnavailableException refused = null;
            for (; ran < 100 && refused == null; ran++) {
                int n = ran;
                try {
                    guard.execute(IdempotencyKey.ofContent("report", n), HOUR, () -> "y".repeat(10_000) + n);
                } catch (IdempotencyStoreUnavailableException full) {
                    refused = full;
                }
            }
            assertThat(refused)
                    .as("claims are refused once the 64 KB are used")
                    .isNotNull()
                    .hasStackTraceContaining("maxRecordBytes");
            assertThat(ran)
                    .as("six results of ten thousand bytes fit, a few more records whose result did not")
                    .isBetween(7, 12);
        }
    }

    @Test
    void theUriSetsTheBoundsAndRefusesWhatItDoesNotKnow() {
        String name = "mem:limits-" + UUID.randomUUID();
        try (Cerberus cerberus = Cerberus.connect(name + "?maxRecords=10&maxRecordBytes=2MB")) {
            assertThat(cerberus.currentEngineUri()).isEqualTo(name);
            assertThatThrownBy(() -> Cerberus.connect(name + "?maxRecords=11"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("already kept in this JVM with maxRecords=10 and maxRecordBytes=2097152");
            try (Cerberus same = Cerberus.connect(name)) {
                assertThat(same.currentEngineUri()).isEqualTo(name);
            }
        }
        assertThatThrownBy(() -> Cerberus.connect("mem:x?maxRecrods=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'maxRecrods'")
                .hasMessageContaining("maxRecordBytes, maxRecords");
        assertThatThrownBy(() -> Cerberus.connect("mem:x?maxRecords=0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxRecords")
                .hasMessageContaining("whole number from 1");
        assertThatThrownBy(() -> Cerberus.connect("mem:x?maxRecordBytes=12TB"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("with KB, MB or GB");
    }
}
