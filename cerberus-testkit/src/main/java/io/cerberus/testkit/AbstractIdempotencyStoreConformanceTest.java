package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyKeyMismatchException;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.Outcome;
import io.cerberus.idempotency.ReplayedFailureException;
import io.cerberus.idempotency.ResultCodec;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The idempotency store contract, through the guard and, as a second party, through the engine's
 * store directly. Extend it in the engine module with the URI of a real server.
 */
public abstract class AbstractIdempotencyStoreConformanceTest {
    private Cerberus cerberus;
    private LockEngine raw;
    private IdempotencyStore store;

    /** @return the URI of the engine under test */
    protected abstract String engineUri();

    @BeforeEach
    void open() {
        cerberus = Cerberus.builder()
                .engine(engineUri())
                .namespace("idem-" + UUID.randomUUID())
                .build();
    }

    @AfterEach
    void close() {
        cerberus.close();
        if (raw != null) {
            raw.close();
        }
    }

    private IdempotencyGuard guard(IdempotencyOptions options) {
        return cerberus.idempotency(options);
    }

    /** The engine's store, opened apart from the client, to act as a second party. */
    private IdempotencyStore rawStore() {
        if (store == null) {
            raw = Engines.open(engineUri(), Duration.ofSeconds(10));
            store = raw.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
        }
        return store;
    }

    @Test
    void theReadmeIdempotencyExampleChargesOnceAndReplaysTheReceipt() throws Exception {
        assumeThat(ReadmeExamples.readme())
                .as("the README's examples run from the Cerberus source tree")
                .isPresent();
        ReadmeExamples.runIdempotencyExample(cerberus);
    }

    @Test
    void concurrentFirstCallsRunTheOperationOnceAndTheOthersGetItsResult() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofSeconds(10)));
        IdempotencyKey key = IdempotencyKey.ofContent("charge", Map.of("order", 7));
        AtomicInteger runs = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Outcome<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                calls.add(pool.submit(() -> guard.execute(key, Duration.ofHours(1), () -> {
                    Thread.sleep(100);
                    return "charged #" + runs.incrementAndGet();
                })));
            }
            List<Outcome<String>> outcomes = new ArrayList<>();
            for (Future<Outcome<String>> call : calls) {
                outcomes.add(call.get());
            }
            assertThat(runs).hasValue(1);
            assertThat(outcomes).extracting(Outcome::value).containsOnly("charged #1");
            assertThat(outcomes).filteredOn(Outcome::executed).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentAsyncCallsRunTheOperationOnceHoldingNoThreadWhileTheyWait() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofSeconds(20)));
        IdempotencyKey key = IdempotencyKey.ofContent("charge", Map.of("order", "async"));
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<String> charge = new CompletableFuture<>();
        int callers = 100;
        int threadsBefore = Thread.activeCount();
        List<CompletableFuture<Outcome<String>>> calls = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            calls.add(guard.executeAsync(key, Duration.ofHours(1), ResultCodec.STRING, () -> {
                runs.incrementAndGet();
                return charge;
            }));
        }
        Poll.until("the first caller runs the operation", TestTimes.millis(10_000), () -> runs.get() == 1);
        assertThat(Thread.activeCount() - threadsBefore)
                .as(
                        "threads started for %s waiting async callers (the guard's pool, and an engine's own threads"
                                + " per call in flight: not one per caller)",
                        callers)
                .isLessThan(45);
        assertThat(calls).noneMatch(CompletableFuture::isDone);
        charge.complete("charged once");
        List<Outcome<String>> outcomes = new ArrayList<>();
        for (CompletableFuture<Outcome<String>> call : calls) {
            outcomes.add(call.get(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS));
        }
        assertThat(runs).hasValue(1);
        assertThat(outcomes).extracting(Outcome::value).containsOnly("charged once");
        assertThat(outcomes).filteredOn(Outcome::executed).hasSize(1);
    }

    @Test
    void anAsyncFailureFreesTheKeyAndARememberedOneIsReplayed() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().remembering(List.of(IllegalStateException.class)));
        IdempotencyKey retried = IdempotencyKey.ofContent("charge", "async-retried");
        CompletableFuture<Outcome<String>> failed = guard.executeAsync(
                retried,
                Duration.ofHours(1),
                ResultCodec.STRING,
                () -> CompletableFuture.failedFuture(new java.io.IOException("gateway timeout")));
        assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(java.io.IOException.class);
        assertThat(guard.executeAsync(
                                retried,
                                Duration.ofHours(1),
                                ResultCodec.STRING,
                                () -> CompletableFuture.completedFuture("second try"))
                        .get(10, TimeUnit.SECONDS)
                        .status())
                .isEqualTo(Outcome.Status.EXECUTED);

        IdempotencyKey declined = IdempotencyKey.ofContent("charge", "async-declined");
        CompletableFuture<Outcome<String>> refused =
                guard.executeAsync(declined, Duration.ofHours(1), ResultCodec.STRING, () -> {
                    throw new IllegalStateException("card declined");
                });
        assertThatThrownBy(() -> refused.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
        CompletableFuture<Outcome<String>> replayed = guard.executeAsync(
                declined,
                Duration.ofHours(1),
                ResultCodec.STRING,
                () -> CompletableFuture.completedFuture("must not run"));
        assertThatThrownBy(() -> replayed.get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(ReplayedFailureException.class)
                .hasMessageContaining("card declined");
    }

    @Test
    void anAsyncDuplicateCancelledWhileWaitingNeverRuns() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofSeconds(20)));
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "async-cancelled");
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyAttempt<String> first = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThat(first.mustRun()).isTrue();
            CompletableFuture<Outcome<String>> duplicate =
                    guard.executeAsync(key, Duration.ofHours(1), ResultCodec.STRING, () -> {
                        runs.incrementAndGet();
                        return CompletableFuture.completedFuture("shipped twice");
                    });
            assertThat(duplicate.cancel(true)).isTrue();
        } // closed without an outcome: the key is free again
        assertThat(guard.executeAsync(
                                key,
                                Duration.ofHours(1),
                                ResultCodec.STRING,
                                () -> CompletableFuture.completedFuture("shipped"))
                        .get(10, TimeUnit.SECONDS))
                .isEqualTo(new Outcome<>("shipped", Outcome.Status.EXECUTED));
        assertThat(runs).as("the cancelled duplicate ran").hasValue(0);
    }

    @Test
    void aDuplicateWhileTheFirstRunsWaitsForItsResultByDefault() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults());
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "parcel-waited-for");
        java.util.concurrent.atomic.AtomicReference<Thread> waiter =
                new java.util.concurrent.atomic.AtomicReference<>();
        ExecutorService duplicates = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "duplicate");
            waiter.set(thread);
            return thread;
        });
        try (IdempotencyAttempt<String> first = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThat(first.mustRun()).isTrue();
            Future<Outcome<String>> duplicate =
                    duplicates.submit(() -> guard.execute(key, Duration.ofHours(1), () -> "shipped twice"));
            // the duplicate has met the running attempt and waits (a rejection would end it instead)
            Poll.until(
                    "the duplicate to wait for the first attempt",
                    TestTimes.millis(10_000),
                    () -> duplicate.isDone()
                            || waiter.get() != null && waiter.get().getState() == Thread.State.TIMED_WAITING);
            assertThat(duplicate.isDone())
                    .as("the duplicate was not rejected: it waits")
                    .isFalse();
            first.complete("shipped");
            assertThat(duplicate.get(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the duplicate waited for the first attempt and replays its result")
                    .isEqualTo(new Outcome<>("shipped", Outcome.Status.REPLAYED));
        } finally {
            duplicates.shutdownNow();
        }
    }

    @Test
    void aDuplicateWhileTheFirstRunsIsRejectedWhenAsked() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().rejectingWhenInProgress());
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "parcel-1");
        rawStore()
                .claim(
                        cerberus.namespace() + "/" + key.id(),
                        key.fingerprint(),
                        "someone-else",
                        Duration.ofSeconds(30));
        assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), () -> "shipped"))
                .isInstanceOf(OperationInProgressException.class)
                .hasMessageContaining("running now");
    }

    @Test
    void aCrashedAttemptFreesItsKeyAfterTheLeaseNotTheRetention() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofSeconds(10)));
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "parcel-2");
        rawStore().claim(cerberus.namespace() + "/" + key.id(), key.fingerprint(), "crashed", Duration.ofMillis(300));
        long start = System.nanoTime();
        Outcome<String> outcome = guard.execute(key, Duration.ofDays(30), () -> "shipped");
        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofMillis(250), Duration.ofSeconds(5));
    }

    @Test
    void anOwnerThatLostItsLeaseCanNeitherCompleteNorReleaseTheNewOwnersRecord() throws Exception {
        IdempotencyStore records = rawStore();
        String id = cerberus.namespace() + "/stale-owner";
        assertThat(records.claim(id, "f", "old", Duration.ofMillis(100))).isEmpty();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (records.read(id).isPresent() && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        assertThat(records.claim(id, "f", "new", Duration.ofSeconds(30)))
                .as("the new owner claims")
                .isEmpty();
        assertThat(records.complete(id, "old", new byte[] {1}, false, Duration.ofHours(1)))
                .isFalse();
        assertThat(records.release(id, "old")).isFalse();
        assertThat(records.renew(id, "old", Duration.ofHours(1)))
                .as("nor stretch it")
                .isFalse();
        assertThat(records.read(id)).hasValueSatisfying(record -> {
            assertThat(record.token()).isEqualTo("new");
            assertThat(record.completed()).isFalse();
        });
    }

    @Test
    void aReusedClientKeyWithAnotherPayloadIsRefusedOnEveryPath() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults());
        guard.execute(
                IdempotencyKey.of("charge", "client-key-1", Map.of("amount", 10)), Duration.ofHours(1), () -> "ok");
        assertThatThrownBy(() -> guard.execute(
                        IdempotencyKey.of("charge", "client-key-1", Map.of("amount", 99)),
                        Duration.ofHours(1),
                        () -> "again"))
                .isInstanceOf(IdempotencyKeyMismatchException.class)
                .hasMessageContaining("another payload");
        IdempotencyKey running = IdempotencyKey.of("charge", "client-key-2", Map.of("amount", 10));
        rawStore()
                .claim(
                        cerberus.namespace() + "/" + running.id(),
                        running.fingerprint(),
                        "other",
                        Duration.ofSeconds(30));
        assertThatThrownBy(() -> guard.execute(
                        IdempotencyKey.of("charge", "client-key-2", Map.of("amount", 11)),
                        Duration.ofHours(1),
                        () -> "x"))
                .as("while in progress too")
                .isInstanceOf(IdempotencyKeyMismatchException.class);
    }

    @Test
    void aDuplicateReplaysTheStoredResultWithoutRunning() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults());
        IdempotencyKey key = IdempotencyKey.ofContent("charge", Map.of("order", 1));
        AtomicInteger runs = new AtomicInteger();
        Callable<String> work = () -> "receipt-" + runs.incrementAndGet();
        assertThat(guard.execute(key, Duration.ofHours(1), work))
                .isEqualTo(new Outcome<>("receipt-1", Outcome.Status.EXECUTED));
        assertThat(guard.execute(key, Duration.ofHours(1), work))
                .isEqualTo(new Outcome<>("receipt-1", Outcome.Status.REPLAYED));
        assertThat(runs).hasValue(1);
    }

    @Test
    void aFailureReleasesTheKeyUnlessItsTypeIsRemembered() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().remembering(List.of(IllegalStateException.class)));
        IdempotencyKey retried = IdempotencyKey.ofContent("charge", "retried");
        assertThatThrownBy(() -> guard.execute(retried, Duration.ofHours(1), () -> {
                    throw new java.io.IOException("gateway timeout");
                }))
                .isInstanceOf(java.io.IOException.class);
        assertThat(guard.execute(retried, Duration.ofHours(1), () -> "second try")
                        .status())
                .isEqualTo(Outcome.Status.EXECUTED);

        IdempotencyKey declined = IdempotencyKey.ofContent("charge", "declined");
        assertThatThrownBy(() -> guard.execute(declined, Duration.ofHours(1), () -> {
                    throw new IllegalStateException("card declined");
                }))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> guard.execute(declined, Duration.ofHours(1), () -> "must not run"))
                .isInstanceOf(ReplayedFailureException.class)
                .hasMessageContaining("card declined");
    }

    @Test
    void theTwoCallFormClaimsCompletesAndReplays() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().rejectingWhenInProgress());
        IdempotencyKey key = IdempotencyKey.ofContent("consume", Map.of("message", "m-1"));
        try (IdempotencyAttempt<String> first = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThat(first.mustRun()).isTrue();
            assertThatThrownBy(() -> guard.begin(key, Duration.ofHours(1), ResultCodec.STRING))
                    .as("a duplicate while it runs")
                    .isInstanceOf(OperationInProgressException.class);
            assertThat(first.complete("consumed").status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThatThrownBy(() -> first.complete("again"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("twice");
        }
        try (IdempotencyAttempt<String> duplicate = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThat(duplicate.mustRun()).isFalse();
            assertThat(duplicate.replayed()).isEqualTo("consumed");
            assertThatThrownBy(() -> duplicate.complete("x"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("replayed");
        }
    }

    @Test
    void anAttemptClosedWithoutAnOutcomeReleasesItsKey() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().remembering(List.of(IllegalStateException.class)));
        IdempotencyKey key = IdempotencyKey.ofContent("consume", Map.of("message", "m-2"));
        try (IdempotencyAttempt<String> abandoned = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThat(abandoned.mustRun()).isTrue();
        }
        assertThat(rawStore().read(cerberus.namespace() + "/" + key.id()))
                .as("released, not remembered as a failure")
                .isEmpty();
        try (IdempotencyAttempt<String> retry = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING)) {
            assertThat(retry.mustRun()).isTrue();
            retry.fail(new java.io.IOException("broker down"));
        }
        assertThat(rawStore().read(cerberus.namespace() + "/" + key.id()))
                .as("a failure releases it too")
                .isEmpty();
    }

    @Test
    void aDuplicateThatGivesUpWaitingLeavesTheOwnersRecordAlone() throws Exception {
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofMillis(300)));
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "parcel-3");
        String id = cerberus.namespace() + "/" + key.id();
        assertThat(rawStore().claim(id, key.fingerprint(), "owner", Duration.ofSeconds(30)))
                .isEmpty();
        long start = System.nanoTime();
        assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), () -> "must not run"))
                .isInstanceOf(OperationInProgressException.class)
                .hasMessageContaining("did not finish within");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofMillis(250), Duration.ofSeconds(5));
        assertThat(rawStore().read(id)).hasValueSatisfying(record -> {
            assertThat(record.token()).isEqualTo("owner");
            assertThat(record.completed()).isFalse();
        });
        assertThat(rawStore()
                        .complete(
                                id,
                                "owner",
                                "done".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                                false,
                                Duration.ofHours(1)))
                .as("the owner still completes")
                .isTrue();
    }

    @Test
    void aWaitingDuplicateIsWokenByTheCompletion() throws Exception {
        IdempotencyStore records = rawStore();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                records.notifiesChanges(), "this store does not notify; waiters poll");
        String id = cerberus.namespace() + "/woken";
        assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30))).isEmpty();
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Future<Long> returnedAt = waiter.submit(() -> {
                records.awaitChange(id, Duration.ofSeconds(10));
                return System.nanoTime();
            });
            assertThatThrownBy(() -> returnedAt.get(300, TimeUnit.MILLISECONDS))
                    .as("still waiting while the record is in progress")
                    .isInstanceOf(java.util.concurrent.TimeoutException.class);
            assertThat(records.complete(id, "owner", new byte[] {1}, false, Duration.ofHours(1)))
                    .isTrue();
            long completedAt = System.nanoTime();
            long woke = returnedAt.get(10, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(woke - completedAt))
                    .as("woken by the completion, not the 10 s bound")
                    .isLessThan(Duration.ofSeconds(1));
        } finally {
            waiter.shutdownNow();
        }
    }

    @Test
    void aClaimResentByItsOwnerIsItsOwnNotAnotherAttemptInProgress() {
        IdempotencyStore records = rawStore();
        String id = cerberus.namespace() + "/resent-claim";
        assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30)))
                .as("the same claim, sent again after a lost answer")
                .isEmpty();
        assertThat(records.claim(id, "f", "someone-else", Duration.ofSeconds(30)))
                .as("another attempt still finds it taken")
                .hasValueSatisfying(record -> assertThat(record.token()).isEqualTo("owner"));
        assertThat(records.complete(id, "owner", new byte[] {7}, false, Duration.ofHours(1)))
                .isTrue();
    }

    @Test
    void aCompletionResentByItsOwnerIsReportedStored() {
        IdempotencyStore records = rawStore();
        String id = cerberus.namespace() + "/resent-complete";
        assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.complete(id, "owner", new byte[] {7}, false, Duration.ofHours(1)))
                .isTrue();
        assertThat(records.complete(id, "owner", new byte[] {7}, false, Duration.ofHours(1)))
                .as("the same completion, sent again after a lost answer")
                .isTrue();
        assertThat(records.complete(id, "someone-else", new byte[] {8}, false, Duration.ofHours(1)))
                .isFalse();
        assertThat(records.read(id)).hasValueSatisfying(record -> {
            assertThat(record.completed()).isTrue();
            assertThat(record.result()).containsExactly(7);
        });
    }

    @Test
    void theOwnersRenewalsNeverMakeItsCompletionFail() throws Exception {
        IdempotencyStore records = rawStore();
        ExecutorService renewer = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 20; round++) {
                String id = cerberus.namespace() + "/renewed-while-completing-" + round;
                assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30)))
                        .isEmpty();
                java.util.concurrent.atomic.AtomicBoolean completed = new java.util.concurrent.atomic.AtomicBoolean();
                Future<?> renewals = renewer.submit(() -> {
                    while (!completed.get() && records.renew(id, "owner", Duration.ofSeconds(30))) {
                        Thread.onSpinWait();
                    }
                });
                assertThat(records.complete(id, "owner", new byte[] {1}, false, Duration.ofHours(1)))
                        .as("round %d: completed while its own renewals run", round)
                        .isTrue();
                completed.set(true);
                renewals.get(10, TimeUnit.SECONDS);
                assertThat(records.read(id))
                        .hasValueSatisfying(
                                record -> assertThat(record.completed()).isTrue());
            }
        } finally {
            renewer.shutdownNow();
        }
    }

    @Test
    void aResultLargerThanTheStoreKeepsIsRememberedAsRunSoADuplicateDoesNotRunAgain() throws Exception {
        int most = rawStore().maxResultBytes();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                most <= 16 * 1024 * 1024, "this store keeps results of any size a test can make");
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults());
        IdempotencyKey key = IdempotencyKey.ofContent("report", "too-large");
        AtomicInteger runs = new AtomicInteger();
        Outcome<byte[]> first = guard.execute(key, Duration.ofHours(1), ResultCodec.BYTES, () -> {
            runs.incrementAndGet();
            return new byte[most + 1];
        });
        assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), ResultCodec.BYTES, () -> {
                    runs.incrementAndGet();
                    return new byte[0];
                }))
                .isInstanceOf(io.cerberus.idempotency.ResultNotKeptException.class)
                .hasMessageContaining("cannot be replayed");
        assertThat(runs).hasValue(1);
    }

    @Test
    void theLongestRetentionAllowedIsKeptAndReplayed() throws Exception {
        Duration longest = rawStore().maxRetention().orElse(IdempotencyGuard.MAX_RETENTION);
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults());
        IdempotencyKey key = IdempotencyKey.ofContent("keep", "longest");
        AtomicInteger runs = new AtomicInteger();
        assertThat(guard.execute(key, longest, () -> "run " + runs.incrementAndGet()))
                .isEqualTo(new Outcome<>("run 1", Outcome.Status.EXECUTED));
        assertThat(guard.execute(key, longest, () -> "run " + runs.incrementAndGet()))
                .isEqualTo(new Outcome<>("run 1", Outcome.Status.REPLAYED));
    }

    @Test
    void aRetentionTheStoreCannotKeepIsRefusedBeforeAnythingRuns() {
        java.util.Optional<Duration> most = rawStore().maxRetention();
        IdempotencyGuard guard = guard(IdempotencyOptions.defaults());
        Duration tooLong = most.map(limit -> limit.plusDays(1)).orElse(IdempotencyGuard.MAX_RETENTION.plusDays(1));
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> guard.execute(
                        IdempotencyKey.ofContent("keep", "too-long"), tooLong, () -> "run " + runs.incrementAndGet()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retention must be at most");
        assertThat(runs).hasValue(0);
    }
}
