package io.cerberus.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.Await;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The guard at its edges: switches, renewals racing settlements, slow stores, dropped attempts, limits. */
class IdempotencyGuardEdgesTest {
    private static final Duration HOUR = Duration.ofHours(1);

    private static IdempotencyGuard guardOn(IdempotencyStore store, IdempotencyOptions options) {
        return new IdempotencyGuard(store, "ns", "test://hooked", options);
    }

    @Test
    void recordsStayOnTheFirstEngineAcrossASwitchSoARetryIsReplayedNotRunAgain() throws Exception {
        String suffix = UUID.randomUUID().toString();
        try (Cerberus cerberus = Cerberus.builder()
                .engine("first", "mem:first-" + suffix)
                .engine("second", "mem:second-" + suffix)
                .build()) {
            IdempotencyKey charge = IdempotencyKey.ofContent("charge", "order-1");
            AtomicInteger charges = new AtomicInteger();
            cerberus.idempotency(IdempotencyOptions.defaults())
                    .execute(charge, HOUR, () -> "charge#" + charges.incrementAndGet());
            IdempotencyKey running = IdempotencyKey.ofContent("charge", "order-2");
            try (IdempotencyAttempt<String> first =
                    cerberus.idempotency(IdempotencyOptions.defaults()).begin(running, HOUR, ResultCodec.STRING)) {
                assertThat(first.mustRun()).isTrue();

                cerberus.switchEngine("second");

                IdempotencyGuard after =
                        cerberus.idempotency(IdempotencyOptions.defaults().rejectingWhenInProgress());
                Outcome<String> retried = after.execute(charge, HOUR, () -> "charge#" + charges.incrementAndGet());
                assertThat(retried).isEqualTo(new Outcome<>("charge#1", Outcome.Status.REPLAYED));
                assertThatThrownBy(() -> after.execute(running, HOUR, () -> "duplicate"))
                        .as("an attempt still running on the first engine")
                        .isInstanceOf(OperationInProgressException.class);
                first.complete("done");
            }
            assertThat(charges).hasValue(1);
        }
    }

    @Test
    void aRenewalInFlightIsWaitedForSoItCannotFailItsOwnCompletion() throws Exception {
        CountDownLatch renewalStarted = new CountDownLatch(1);
        CountDownLatch finishRenewal = new CountDownLatch(1);
        AtomicBoolean renewing = new AtomicBoolean();
        AtomicBoolean overlapped = new AtomicBoolean();
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public boolean renew(String id, String token, Duration lease) {
                renewing.set(true);
                renewalStarted.countDown();
                try {
                    finishRenewal.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                boolean renewed = super.renew(id, token, lease);
                renewing.set(false);
                return renewed;
            }

            @Override
            public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
                overlapped.compareAndSet(false, renewing.get());
                return super.complete(id, token, result, failure, retention);
            }
        };
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withLease(Duration.ofSeconds(1)))) {
            IdempotencyAttempt<String> attempt =
                    guard.begin(IdempotencyKey.ofContent("ship", "p-1"), HOUR, ResultCodec.STRING);
            assertThat(renewalStarted.await(5, TimeUnit.SECONDS))
                    .as("a renewal started")
                    .isTrue();
            AtomicReference<Outcome<String>> completed = new AtomicReference<>();
            Thread completer = new Thread(() -> completed.set(attempt.complete("shipped")));
            completer.start();
            completer.join(200);
            assertThat(completed.get())
                    .as("the completion waits for the renewal in flight")
                    .isNull();
            finishRenewal.countDown();
            completer.join(5_000);
            assertThat(completed.get()).isEqualTo(new Outcome<>("shipped", Outcome.Status.EXECUTED));
            assertThat(overlapped)
                    .as("the store saw the completion while the renewal ran")
                    .isFalse();
        }
    }

    @Test
    void aSlowRenewalDelaysNoOtherAttempt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch slowRenewalHangs = new CountDownLatch(1);
        AtomicInteger fastRenewals = new AtomicInteger();
        AtomicInteger slowRenewals = new AtomicInteger();
        IdempotencyKey slow = IdempotencyKey.ofContent("ship", "slow");
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public boolean renew(String id, String token, Duration lease) {
                if (id.endsWith(slow.id())) {
                    slowRenewals.incrementAndGet();
                    slowRenewalHangs.countDown();
                    try {
                        release.await(10, TimeUnit.SECONDS); // a store call that hangs until its timeout
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                } else {
                    fastRenewals.incrementAndGet();
                }
                return super.renew(id, token, lease);
            }
        };
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withLease(Duration.ofSeconds(1)))) {
            IdempotencyAttempt<String> stuck = guard.begin(slow, HOUR, ResultCodec.STRING);
            assertThat(slowRenewalHangs.await(5, TimeUnit.SECONDS))
                    .as("the slow attempt's renewal hangs")
                    .isTrue();
            IdempotencyAttempt<String> other =
                    guard.begin(IdempotencyKey.ofContent("ship", "fast"), HOUR, ResultCodec.STRING);
            Await.until(
                    "the other attempt renewed while one renewal hangs",
                    Duration.ofSeconds(5),
                    () -> fastRenewals.get() >= 3);
            assertThat(slowRenewals)
                    .as("no second renewal of an attempt while its first is in flight")
                    .hasValue(1);
            assertThat(other.complete("ok").executed()).isTrue();
            release.countDown();
            long window = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(150);
            while (slowRenewals.get() <= 2 && System.nanoTime() - window < 0) {
                Thread.sleep(10);
            }
            assertThat(slowRenewals.get())
                    .as(
                            "the ticks that came while the renewal hung left no renewals queued behind it to follow at once")
                    .isLessThanOrEqualTo(2);
            stuck.close();
        }
    }

    @Test
    void aDuplicateWaitsLongerEachTimeOnAStoreThatDoesNotNotifyAndTwoSecondsAtATimeOnOneThatDoes() throws Exception {
        for (boolean notifies : new boolean[] {false, true}) {
            List<Long> waits = new CopyOnWriteArrayList<>();
            CountDownLatch waited = new CountDownLatch(notifies ? 1 : 7);
            HookedIdempotencyStore store = new HookedIdempotencyStore() {
                @Override
                public boolean notifiesChanges() {
                    return notifies;
                }

                @Override
                public void awaitChange(String id, Duration atMost) throws InterruptedException {
                    waits.add(atMost.toMillis());
                    waited.countDown();
                    inner.awaitChange(id, atMost);
                }
            };
            IdempotencyKey key = IdempotencyKey.ofContent("ship", "waits-" + notifies);
            try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
                IdempotencyAttempt<String> first = guard.begin(key, HOUR, ResultCodec.STRING);
                CompletableFuture<IdempotencyAttempt<String>> duplicate = CompletableFuture.supplyAsync(() -> {
                    try {
                        return guard.begin(key, HOUR, ResultCodec.STRING);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertThat(waited.await(10, TimeUnit.SECONDS)).isTrue();
                first.complete("shipped");
                assertThat(duplicate.get(10, TimeUnit.SECONDS).replayed()).isEqualTo("shipped");
            }
            if (notifies) {
                assertThat(waits.get(0))
                        .as("a store that notifies: asked again every 2 s")
                        .isEqualTo(2_000L);
            } else {
                assertThat(waits.subList(0, 7))
                        .as("a store that does not notify: 20 ms doubling to 500 ms")
                        .containsExactly(20L, 40L, 80L, 160L, 320L, 500L, 500L);
            }
        }
    }

    @Test
    void anAsyncDuplicateAsksAgainLessOftenTheLongerItWaits() throws Exception {
        List<Long> claims = new CopyOnWriteArrayList<>();
        CountDownLatch sixLooks = new CountDownLatch(7);
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
                claims.add(System.nanoTime());
                sixLooks.countDown();
                return super.claim(id, fingerprint, token, lease);
            }
        };
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "async-waits");
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            IdempotencyAttempt<String> first = guard.begin(key, HOUR, ResultCodec.STRING);
            CompletableFuture<Outcome<String>> duplicate = guard.executeAsync(
                    key, HOUR, ResultCodec.STRING, () -> CompletableFuture.completedFuture("ran twice"));
            assertThat(sixLooks.await(10, TimeUnit.SECONDS)).isTrue();
            first.complete("shipped");
            assertThat(duplicate.get(10, TimeUnit.SECONDS))
                    .isEqualTo(new Outcome<>("shipped", Outcome.Status.REPLAYED));
        }
        // claims.get(0) is the first attempt's; the duplicate's six looks then pause 20, 40, 80, 160, 320 ms between
        assertThat(TimeUnit.NANOSECONDS.toMillis(claims.get(6) - claims.get(1)))
                .as("the pauses between the duplicate's looks double")
                .isGreaterThanOrEqualTo(600);
    }

    @Test
    void anAttemptDroppedWithoutBeingSettledStopsBeingRenewed() throws Exception {
        AtomicLong lastRenewal = new AtomicLong(System.nanoTime());
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public boolean renew(String id, String token, Duration lease) {
                lastRenewal.set(System.nanoTime());
                return super.renew(id, token, lease);
            }
        };
        IdempotencyKey key = IdempotencyKey.ofContent("consume", "dropped");
        try (IdempotencyGuard guard =
                guardOn(store, IdempotencyOptions.defaults().withLease(Duration.ofMillis(150)))) {
            beginAndDrop(guard, key);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            boolean stopped = false;
            while (!stopped && System.nanoTime() - deadline < 0) {
                System.gc();
                Thread.sleep(50);
                stopped = System.nanoTime() - lastRenewal.get() > TimeUnit.MILLISECONDS.toNanos(400);
            }
            assertThat(stopped)
                    .as("no renewal for 8 renewal periods once the attempt is garbage")
                    .isTrue();
            long freeBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (store.read("ns/" + key.id()).isPresent() && System.nanoTime() - freeBy < 0) {
                Thread.sleep(20);
            }
            assertThat(store.read("ns/" + key.id()))
                    .as("the key is free after the lease")
                    .isEmpty();
        }
    }

    private static void beginAndDrop(IdempotencyGuard guard, IdempotencyKey key) throws InterruptedException {
        assertThat(guard.begin(key, HOUR, ResultCodec.STRING).mustRun()).isTrue();
    }

    @Test
    void aResultLargerThanTheStoreKeepsIsRememberedAsRunSoADuplicateDoesNotRunAgain() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public int maxResultBytes() {
                return 16;
            }
        };
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            IdempotencyKey key = IdempotencyKey.ofContent("report", "big");
            AtomicInteger runs = new AtomicInteger();
            Outcome<String> first = guard.execute(key, HOUR, () -> "x".repeat(17) + runs.incrementAndGet());
            assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThatThrownBy(() -> guard.execute(key, HOUR, () -> "again" + runs.incrementAndGet()))
                    .isInstanceOf(ResultNotKeptException.class)
                    .hasMessageContaining("ran, but its result of 18 bytes")
                    .hasMessageContaining("does not run again");
            assertThat(runs).hasValue(1);
        }
    }

    @Test
    void aResultTheCodecCannotEncodeIsRememberedAsRunAndTheCallerIsTold() throws Exception {
        ResultCodec<Object> failing = new ResultCodec<>() {
            @Override
            public byte[] encode(Object value) {
                throw new IllegalStateException(
                        "no serializer for " + value.getClass().getSimpleName());
            }

            @Override
            public Object decode(byte[] bytes) {
                return null;
            }
        };
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            IdempotencyKey key = IdempotencyKey.ofContent("export", "x");
            AtomicInteger runs = new AtomicInteger();
            assertThatThrownBy(() -> guard.execute(key, HOUR, failing, () -> new Object[] {runs.incrementAndGet()}))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("could not be encoded");
            assertThatThrownBy(() -> guard.execute(key, HOUR, failing, () -> runs.incrementAndGet()))
                    .isInstanceOf(ResultNotKeptException.class)
                    .hasMessageContaining("could not be encoded");
            assertThat(runs).hasValue(1);
        }
    }

    @Test
    void aRetentionTheStoreCannotKeepIsRefusedBeforeAnythingRuns() {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public Optional<Duration> maxRetention() {
                return Optional.of(Duration.ofDays(30));
            }
        };
        AtomicInteger runs = new AtomicInteger();
        try (IdempotencyGuard guard = guardOn(store, IdempotencyOptions.defaults())) {
            assertThatThrownBy(() -> guard.execute(
                            IdempotencyKey.ofContent("a", 1), Duration.ofDays(31), () -> "" + runs.incrementAndGet()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at most 30 days on test://hooked");
            assertThatThrownBy(() -> guard.execute(
                            IdempotencyKey.ofContent("a", 2),
                            Duration.ofSeconds(Long.MAX_VALUE),
                            () -> "" + runs.incrementAndGet()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("null for ever");
        }
        assertThat(runs).hasValue(0);
    }

    @Test
    void anErrorWhileWaitingForAnotherAttemptFollowsTheStoreDownRule() throws Exception {
        HookedIdempotencyStore store = new HookedIdempotencyStore() {
            @Override
            public void awaitChange(String id, Duration atMost) {
                throw new EngineUnavailableException("test://hooked went away", null);
            }
        };
        IdempotencyKey key = IdempotencyKey.ofContent("ship", "waited-for");
        store.claim("ns/" + key.id(), key.fingerprint(), "the-first-attempt", Duration.ofSeconds(30));
        IdempotencyOptions waiting = IdempotencyOptions.defaults().waitingWhenInProgress(Duration.ofSeconds(5));
        try (IdempotencyGuard closed = guardOn(store, waiting);
                IdempotencyGuard open = guardOn(store, waiting.failingOpen())) {
            assertThatThrownBy(() -> closed.execute(key, HOUR, () -> "must not run"))
                    .isInstanceOf(IdempotencyStoreUnavailableException.class)
                    .hasMessageContaining("fails closed");
            assertThat(open.execute(key, HOUR, () -> "ran unguarded"))
                    .isEqualTo(new Outcome<>("ran unguarded", Outcome.Status.UNGUARDED));
        }
    }

    @Test
    void theEmptyTextAndNullReplayAsThemselves() throws Exception {
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            for (String value : new String[] {"", null, "text"}) {
                IdempotencyKey key = IdempotencyKey.ofContent("text", String.valueOf(value) + (value == null));
                guard.execute(key, HOUR, () -> value);
                assertThat(guard.execute(key, HOUR, () -> "ran again").value()).isEqualTo(value);
            }
            byte[][] values = {
                null,
                new byte[0],
                new byte[] {(byte) 0xFF},
                new byte[] {(byte) 0xFF, 1},
                "raw".getBytes(StandardCharsets.UTF_8)
            };
            for (int i = 0; i < values.length; i++) {
                byte[] value = values[i];
                IdempotencyKey key = IdempotencyKey.ofContent("bytes", i);
                guard.execute(key, HOUR, ResultCodec.BYTES, () -> value);
                assertThat(guard.execute(key, HOUR, ResultCodec.BYTES, () -> new byte[] {42})
                                .value())
                        .isEqualTo(value);
            }
        }
    }

    @Test
    void aFailureThatTookEffectIsStoredWhateverTheGuardRemembers() throws Exception {
        try (IdempotencyGuard guard = guardOn(new HookedIdempotencyStore(), IdempotencyOptions.defaults())) {
            IdempotencyKey key = IdempotencyKey.ofContent("book", "room-7");
            try (IdempotencyAttempt<String> attempt = guard.begin(key, HOUR, ResultCodec.STRING)) {
                attempt.fail(new java.io.IOException("no confirmation"), true);
            }
            assertThatThrownBy(() -> guard.execute(key, HOUR, () -> "booked twice"))
                    .isInstanceOf(ReplayedFailureException.class)
                    .hasMessageContaining("no confirmation")
                    .hasMessageContaining("took effect all the same");
        }
    }
}
