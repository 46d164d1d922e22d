package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.Await;
import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;

/**
 * How the guard settles an attempt with its store: retries of a store that is down (how many, how
 * far apart), a completion the store refuses, renewals ended by every settlement, the bounds of what
 * it keeps (result size, failure text, retention), and the scheduler it owns or shares.
 */
class IdempotencyGuardSettlingTest {
    private static final Duration HOUR = Duration.ofHours(1);
    private static final IdempotencyKey KEY = IdempotencyKey.ofContent("charge", "order-7");

    private static IdempotencyGuard guardOn(HookedIdempotencyStore store, IdempotencyOptions options) {
        return new IdempotencyGuard(store, "ns", "test://hooked", options);
    }

    /** A store whose claims fail as unreachable the first {@code downFor} times. */
    /** @return a store that cannot be reached for its first {@code downFor} claims */
    private static CountingClaims downAtFirst(int downFor) {
        return new CountingClaims(claim -> {
            if (claim <= downFor) {
                throw new EngineUnavailableException("test://hooked is down", null);
            }
        });
    }

    @Test
    void aStoreDownFewerTimesThanItsAttemptsIsAskedAgainAfterABackoffThatDoubles() throws Exception {
        CountingClaims store = downAtFirst(2);
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withStoreAttempts(3))) {
            long start = System.nanoTime();
            Outcome<String> outcome = guard.execute(KEY, HOUR, () -> "ran");
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(store.claims).hasValue(3);
            assertThat(tookMillis).as("two pauses, 50 and 100 ms").isGreaterThanOrEqualTo(150);
        }
    }

    @Test
    void aStoreDownAsManyTimesAsItsAttemptsFailsClosedAfterExactlyThoseAttempts() {
        CountingClaims store = downAtFirst(3);
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withStoreAttempts(3))) {
            assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "ran#" + runs.incrementAndGet()))
                    .isInstanceOf(IdempotencyStoreUnavailableException.class)
                    .hasMessageContaining("could not be reached after 3 tries")
                    .hasMessageContaining("did not run");
            assertThat(store.claims).hasValue(3);
            assertThat(runs).hasValue(0);
        }
    }

    @Test
    void aFailureWhoseKeyCannotBeFreedCarriesWhy() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public boolean release(String id, String token) {
                throw new EngineUnavailableException("test://hooked is down", null);
            }
        };
        IllegalStateException declined = new IllegalStateException("declined");
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withStoreAttempts(1))) {
            assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> {
                        throw declined;
                    }))
                    .isSameAs(declined);
            assertThat(declined.getSuppressed()).singleElement().isInstanceOf(EngineUnavailableException.class);
        }
    }

    @Test
    void aCompletionTheStoreRefusesTellsTheCallerTheLeaseRanOut() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
                return false; // the lease ran out and the record is no longer this attempt's
            }
        };
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults());
                IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
            assertThatThrownBy(() -> attempt.complete("charged"))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("ran out first and another attempt may have taken the key")
                    .hasMessageContaining("its result was not stored");
        }
    }

    @Test
    void aCompletionRefusedAfterARefusedRenewalSaysSo() throws Exception {
        AtomicInteger refusedRenewals = new AtomicInteger();
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public boolean renew(String id, String token, Duration lease) {
                refusedRenewals.incrementAndGet();
                return false; // another attempt took the key
            }

            @Override
            public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
                return false;
            }
        };
        try (IdempotencyGuard guard =
                        guardOn(store, IdempotencyOptions.defaults().withLease(Duration.ofMillis(150)));
                IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
            long refusedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (refusedRenewals.get() == 0 && System.nanoTime() - refusedBy < 0) {
                Thread.sleep(5);
            }
            assertThat(refusedRenewals.get()).isPositive();
            assertThatThrownBy(() -> attempt.complete("charged"))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("ran out first (a renewal was refused)");
        }
    }

    @Test
    void aResultNotKeptIsToldToDuplicatesWhichDoNotRun() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore();
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            try (IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING)) {
                attempt.completeNotKept("the export is 2 GB");
            }
            assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "again#" + runs.incrementAndGet()))
                    .isInstanceOf(ResultNotKeptException.class)
                    .hasMessageContaining("the export is 2 GB")
                    .hasMessageContaining("does not run again");
            assertThat(runs).hasValue(0);
        }
    }

    @Test
    void everySettlementEndsTheAttemptsRenewals() throws Exception {
        AtomicInteger renewals = new AtomicInteger();
        TransactionalStore store = new TransactionalStore() {
            @Override
            public boolean renew(String id, String token, Duration lease) {
                renewals.incrementAndGet();
                return super.renew(id, token, lease);
            }
        };
        Connection connection = store.transaction(); // never committed: the in-transaction completions stay in progress
        Duration lease = Duration.ofMillis(150); // renewed every 50 ms while it runs
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withLease(lease))) {
            for (String settlement : new String[] {
                "release", "fail", "complete", "completeNotKept", "completeIn", "failIn", "completeNotKeptIn"
            }) {
                IdempotencyKey key = IdempotencyKey.ofContent("charge", settlement);
                IdempotencyAttempt<String> attempt = guard.begin(key, HOUR, ResultCodec.STRING);
                long seenBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                int before = renewals.get();
                while (renewals.get() == before && System.nanoTime() - seenBy < 0) {
                    Thread.sleep(5);
                }
                assertThat(renewals.get()).as("renewed while it runs").isGreaterThan(before);
                switch (settlement) {
                    case "release" -> attempt.close();
                    case "fail" -> attempt.fail(new IllegalStateException("declined"));
                    case "completeNotKept" -> attempt.completeNotKept("too large");
                    case "completeIn" -> attempt.completeIn(connection, "done");
                    case "failIn" -> attempt.failIn(connection, new IllegalStateException("declined"));
                    case "completeNotKeptIn" -> attempt.completeNotKeptIn(connection, "too large");
                    default -> attempt.complete("done");
                }
                int settled = renewals.get();
                Thread.sleep(lease.toMillis() * 2); // four renewal periods: a renewal left scheduled would be sent
                assertThat(renewals.get())
                        .as("renewals after " + settlement)
                        .isLessThanOrEqualTo(settled + 1); // one may have been under way
                int after = renewals.get();
                Thread.sleep(lease.toMillis() * 2);
                assertThat(renewals.get()).as("renewals after " + settlement).isEqualTo(after);
            }
        }
    }

    @Test
    void aGuardShutsDownOnlyTheSchedulerItOwns() throws Exception {
        ScheduledExecutorService shared = IdempotencyGuard.newRenewer();
        try {
            new IdempotencyGuard(
                            new HookedIdempotencyStore(), "ns", "test://hooked", IdempotencyOptions.defaults(), shared)
                    .close();
            assertThat(shared.isShutdown())
                    .as("a shared scheduler outlives the guard")
                    .isFalse();
        } finally {
            shared.shutdownNow();
        }
        IdempotencyGuard owning = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults());
        AtomicReference<Thread> renewalThread = new AtomicReference<>();
        try (IdempotencyAttempt<String> attempt =
                owning.begin(IdempotencyKey.ofContent("charge", "own"), HOUR, ResultCodec.STRING)) {
            assertThat(attempt.mustRun()).isTrue();
            Thread.getAllStackTraces().keySet().stream()
                    .filter(thread -> thread.getName().equals("cerberus-idempotency-renewer"))
                    .forEach(renewalThread::set);
        }
        owning.close();
        assertThat(renewalThread.get()).as("the guard's own renewal thread").isNotNull();
        renewalThread.get().join(TimeUnit.SECONDS.toMillis(10));
        assertThat(renewalThread.get().isAlive())
                .as("its own scheduler ends with it")
                .isFalse();
    }

    @Test
    void theRenewalSchedulerRunsOnADaemonThreadAndForgetsCancelledRenewals() throws Exception {
        ScheduledExecutorService renewer = IdempotencyGuard.newRenewer();
        try {
            assertThat(renewer.schedule(() -> Thread.currentThread().isDaemon(), 0, TimeUnit.MILLISECONDS)
                            .get(10, TimeUnit.SECONDS))
                    .as("a renewal thread never keeps the JVM alive")
                    .isTrue();
            assertThat(((ScheduledThreadPoolExecutor) renewer).getRemoveOnCancelPolicy())
                    .as("a settled attempt's renewal leaves the queue at once")
                    .isTrue();
        } finally {
            renewer.shutdownNow();
        }
    }

    @Test
    void aReusedKeysMessageShowsBothFingerprintsShortened() throws Exception {
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            IdempotencyKey first = IdempotencyKey.of("charge", "client-key-1", "amount=10");
            IdempotencyKey reused = IdempotencyKey.of("charge", "client-key-1", "amount=99");
            guard.execute(first, HOUR, () -> "ran");
            assertThatThrownBy(() -> guard.execute(reused, HOUR, () -> "again"))
                    .isInstanceOf(IdempotencyKeyMismatchException.class)
                    .hasMessageContaining("(fingerprint " + first.fingerprint().substring(0, 15) + "..., now "
                            + reused.fingerprint().substring(0, 15) + "...)")
                    .message()
                    .doesNotContain(first.fingerprint());
        }
    }

    @Test
    void aFailureTextIsKeptWholeUpTo4096CharactersAndCutPastThem() throws Exception {
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            String prefix = IllegalStateException.class.getName() + ": ";
            String suffix = " (it took effect all the same)";
            String exact = "x".repeat(4096 - prefix.length() - suffix.length());
            String longer = exact + "y";
            for (String message : new String[] {exact, longer}) {
                IdempotencyKey key = IdempotencyKey.ofContent("charge", message.length());
                try (IdempotencyAttempt<String> attempt = guard.begin(key, HOUR, ResultCodec.STRING)) {
                    attempt.fail(new IllegalStateException(message), true);
                }
                assertThatThrownBy(() -> guard.execute(key, HOUR, () -> "again"))
                        .isInstanceOf(ReplayedFailureException.class)
                        .satisfies(replayed -> {
                            if (message.equals(exact)) {
                                assertThat(replayed.getMessage())
                                        .as("kept whole")
                                        .endsWith(exact + suffix);
                            } else {
                                assertThat(replayed.getMessage())
                                        .as("cut at 4096 characters")
                                        .contains(exact + "y (it took effect all the same...")
                                        .doesNotContain("the same)");
                            }
                        });
            }
        }
    }

    @Test
    void theLongestRetentionsAllowedAreAccepted() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public Optional<Duration> maxRetention() {
                return Optional.of(Duration.ofDays(30));
            }
        };
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            assertThat(guard.execute(KEY, Duration.ofDays(30), () -> "kept").status())
                    .as("the store's own limit")
                    .isEqualTo(Outcome.Status.EXECUTED);
            assertThatThrownBy(() -> guard.execute(KEY, Duration.ofDays(30).plusMillis(1), () -> "kept"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at most 30 days on test://hooked");
        }
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            assertThat(guard.execute(KEY, IdempotencyGuard.MAX_RETENTION, () -> "kept")
                            .status())
                    .as("the guard's limit")
                    .isEqualTo(Outcome.Status.EXECUTED);
            assertThatThrownBy(() -> guard.execute(
                            IdempotencyKey.ofContent("charge", "longer"),
                            IdempotencyGuard.MAX_RETENTION.plusMillis(1),
                            () -> "kept"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("the retention must be at most 365000 days");
        }
    }

    @Test
    void aResultOfExactlyTheStoresLimitIsKept() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public int maxResultBytes() {
                return 16;
            }
        };
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            guard.execute(KEY, HOUR, () -> "x".repeat(16));
            assertThat(guard.execute(KEY, HOUR, () -> "again"))
                    .isEqualTo(new Outcome<>("x".repeat(16), Outcome.Status.REPLAYED));
        }
    }

    @Test
    void anAsyncOperationFailingWithACompletionExceptionFailsWithItsCause() throws Exception {
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            IllegalStateException declined = new IllegalStateException("declined");
            CompletableFuture<Outcome<String>> outcome = guard.executeAsync(
                    KEY,
                    HOUR,
                    ResultCodec.STRING,
                    () -> CompletableFuture.failedFuture(new CompletionException(declined)));
            assertThat(outcome.handle((value, failure) -> failure).get(10, TimeUnit.SECONDS))
                    .as("the cause itself, not the wrapper")
                    .isSameAs(declined);
            assertThat(guard.execute(KEY, HOUR, () -> "retried").status())
                    .as("the failure freed the key")
                    .isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Test
    void anUnguardedAttemptOfAFailOpenGuardCompletesInATransactionWithoutStoring() throws Exception {
        CountingClaims store = downAtFirst(Integer.MAX_VALUE);
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().failingOpen().withStoreAttempts(1))) {
            IdempotencyAttempt<String> attempt = guard.begin(KEY, HOUR, ResultCodec.STRING);
            assertThat(attempt.mustRun()).isTrue();
            Connection connection = new TransactionalStore().connection();
            assertThat(attempt.completeIn(connection, "ran")).isEqualTo(new Outcome<>("ran", Outcome.Status.UNGUARDED));
        }
    }

    @Test
    void aClosedGuardRunsNothingClaimsNothingAndSaysSo() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore();
        IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults());
        guard.close();
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "ran#" + runs.incrementAndGet()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("guard is closed")
                .hasMessageContaining("nothing ran");
        assertThatThrownBy(() -> guard.begin(KEY, HOUR, ResultCodec.STRING)).isInstanceOf(IllegalStateException.class);
        CompletableFuture<Outcome<String>> async = guard.executeAsync(
                KEY,
                HOUR,
                ResultCodec.STRING,
                () -> CompletableFuture.completedFuture("ran#" + runs.incrementAndGet()));
        assertThat(async.handle((value, failure) -> failure).get(10, TimeUnit.SECONDS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("guard is closed");
        assertThat(runs).hasValue(0);
        assertThat(store.read("ns/" + KEY.id())).as("no claim left behind").isEmpty();
    }

    /** A waiting async call used to be timed on the client's scheduler, which drops what it holds when it closes. */
    @Test
    void anAsyncCallWaitingForABusyKeyEndsWhenItsClientsSchedulerCloses() throws Exception {
        CountingClaims store = new CountingClaims(claim -> {});
        ScheduledExecutorService clients = IdempotencyGuard.newRenewer();
        try (IdempotencyGuard first = guardOn(store, IdempotencyOptions.defaults())) {
            IdempotencyAttempt<String> running = first.begin(KEY, HOUR, ResultCodec.STRING);
            IdempotencyGuard waiting =
                    new IdempotencyGuard(store, "ns", "test://hooked", IdempotencyOptions.defaults(), clients);
            CompletableFuture<Outcome<String>> duplicate = waiting.executeAsync(
                    KEY, HOUR, ResultCodec.STRING, () -> CompletableFuture.completedFuture("duplicate ran"));
            Await.until(
                    "the duplicate to ask, find the key busy and wait: twice",
                    Duration.ofSeconds(10),
                    () -> store.claims.get() >= 3);
            assertThat(duplicate).isNotDone();
            clients.shutdownNow();
            assertThat(duplicate.handle((value, failure) -> failure).get(5, TimeUnit.SECONDS))
                    .as("ended within a pause between asks (500 ms at most), not at the end of its 30-s wait")
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("guard is closed")
                    .hasMessageContaining("its client");
            assertThat(store.claims.get())
                    .as("the store asked a few times, not in a spin")
                    .isLessThan(20);
            assertThat(running.complete("first").status()).isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Test
    void aGuardClosedWhileItClaimsGivesTheKeyBack() throws Exception {
        ScheduledExecutorService clients = IdempotencyGuard.newRenewer();
        CountingClaims store = new CountingClaims(claim -> clients.shutdownNow());
        IdempotencyGuard guard =
                new IdempotencyGuard(store, "ns", "test://hooked", IdempotencyOptions.defaults(), clients);
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "ran#" + runs.incrementAndGet()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed while claiming")
                .hasMessageContaining("given back");
        assertThat(runs).hasValue(0);
        assertThat(store.read("ns/" + KEY.id()))
                .as("the claim made as it closed is released")
                .isEmpty();
    }

    @Test
    void anInterruptDuringTheRetriesOfAStoreDownEndsThemAndIsKeptForTheCaller() {
        CountingClaims store = downAtFirst(Integer.MAX_VALUE);
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withStoreAttempts(5))) {
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> guard.execute(KEY, HOUR, () -> "ran#" + runs.incrementAndGet()))
                        .isInstanceOf(IdempotencyStoreUnavailableException.class)
                        .hasMessageContaining("did not run");
                assertThat(Thread.currentThread().isInterrupted())
                        .as("the interrupt is kept for the caller")
                        .isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(store.claims)
                    .as("no retry after the interrupt (five tries otherwise)")
                    .hasValue(1);
            assertThat(runs).hasValue(0);
        }
    }

    @Test
    void anAsyncCallCancelledWhileItClaimsRunsNothingAndGivesTheKeyBack() throws Exception {
        java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
        AtomicReference<CompletableFuture<Outcome<String>>> call = new AtomicReference<>();
        CountingClaims store = new CountingClaims(claim -> {
            try {
                returned.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            call.get().cancel(false); // the caller gives up while its claim is on its way
        });
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            call.set(guard.executeAsync(
                    KEY,
                    HOUR,
                    ResultCodec.STRING,
                    () -> CompletableFuture.completedFuture("ran#" + runs.incrementAndGet())));
            returned.countDown();
            Await.until(
                    "the claim answered and given back",
                    Duration.ofSeconds(5),
                    () -> store.answered.get() > 0
                            && store.read("ns/" + KEY.id()).isEmpty());
            assertThat(call.get()).isCancelled();
            assertThat(store.read("ns/" + KEY.id()))
                    .as("the claim is given back")
                    .isEmpty();
            assertThat(runs).hasValue(0);
        }
    }

    /** Counts claims; runs {@code onClaim} before each. */
    private static final class CountingClaims extends HookedIdempotencyStore {
        final AtomicInteger claims = new AtomicInteger();
        /** Claims the store has answered. */
        final AtomicInteger answered = new AtomicInteger();
        /** Runs with each claim's number (from 1) before the store sees it; it may throw, as a store that is down. */
        final IntConsumer onClaim;

        CountingClaims(IntConsumer onClaim) {
            this.onClaim = onClaim;
        }

        @Override
        public Optional<io.cerberus.spi.IdempotencyRecord> claim(
                String id, String fingerprint, String token, Duration lease) {
            onClaim.accept(claims.incrementAndGet());
            try {
                return super.claim(id, fingerprint, token, lease);
            } finally {
                answered.incrementAndGet();
            }
        }
    }
}
