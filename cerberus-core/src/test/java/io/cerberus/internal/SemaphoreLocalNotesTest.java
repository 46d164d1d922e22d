package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedSemaphore;
import io.cerberus.Permit;
import io.cerberus.Permits;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.ScriptedEngineProvider.Scripted;
import io.cerberus.servers.Await;
import io.cerberus.servers.Timeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a client notes of its semaphores' permits ({@link LocalSlots}: which its acquisitions hold or take, how many of
 * its threads wait for each) is a hint that never hides a free permit from the client's next take, and a take that
 * waited, failed or was cancelled gives back every permit it took. Blocking and async takes alike.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SemaphoreLocalNotesTest {
    private static final Duration ZERO = Duration.ZERO;

    @Test
    void aPermitGivenBackOrReleasedOrFoundBusyIsAskedForAgainByTheSameClient() throws Exception {
        String store = "mem:local-notes-" + UUID.randomUUID();
        try (Cerberus mine = Cerberus.connect(store);
                Cerberus other = Cerberus.connect(store)) {
            DistributedSemaphore pool = mine.semaphore("pool", 3);
            Permits kept = pool.acquire(1, ZERO); // keeps the client's notes of the semaphore all along
            Permits theirs = other.semaphore("pool", 3).acquire(1, ZERO);

            assertThat(pool.tryAcquire(2, ZERO))
                    .as("one of the two is held elsewhere")
                    .isEmpty();
            assertThat(pool.tryAcquireAsync(2, ZERO).get(10, TimeUnit.SECONDS)).isEmpty();
            Permits third = pool.tryAcquire(1, ZERO)
                    .orElseThrow(() -> new AssertionError("the permit the takes of two found free was not given back"));
            third.close();
            assertThat(pool.tryAcquireAsync(1, ZERO).get(10, TimeUnit.SECONDS))
                    .as("the permit released by this client")
                    .hasValueSatisfying(Permits::close);

            theirs.close();
            assertThat(pool.tryAcquire(2, ZERO))
                    .as("the permit released elsewhere, which this client's takes found busy")
                    .hasValueSatisfying(Permits::close);
            kept.close();
            assertThat(pool.availablePermits()).isEqualTo(3);
        }
    }

    @Test
    void waitersThatGaveUpLeaveNoNoteThatHidesAPermitTheClientReleasesLater() throws Exception {
        try (Cerberus mine = Cerberus.connect("mem:local-notes-" + UUID.randomUUID())) {
            DistributedSemaphore pool = mine.semaphore("pool", 2);
            Permits first = pool.acquire(1, ZERO);
            Permits second = pool.acquire(1, ZERO);
            assertThat(pool.tryAcquire(1, Duration.ofMillis(150)))
                    .as("both are held by this client")
                    .isEmpty();
            assertThat(pool.tryAcquireAsync(1, Duration.ofMillis(150)).get(10, TimeUnit.SECONDS))
                    .isEmpty();

            first.close();
            Permits again = pool.tryAcquire(1, ZERO)
                    .orElseThrow(() -> new AssertionError("the first permit released is hidden"));
            second.close();
            assertThat(pool.tryAcquire(1, ZERO))
                    .as("the second permit released")
                    .hasValueSatisfying(Permits::close);
            again.close();
        }
    }

    /**
     * A take of two waits in the line of the permit its client holds; that one is released to it, but the third is
     * held elsewhere: the take gives the one it got back and waits again, to its end, instead of holding one of two.
     */
    @Test
    void aTakeThatGetsThePermitItWaitedForButNotTheRestWaitsAgainAndEndsHoldingNothing() throws Exception {
        String store = "scripted:local-notes-" + UUID.randomUUID();
        try (Cerberus other = Cerberus.connect(store);
                Cerberus mine = opened(Cerberus.connect(store))) {
            Scripted engine = ScriptedEngineProvider.last;
            DistributedSemaphore pool = mine.semaphore("pool", 3);
            Permits local = pool.acquire(1, ZERO);
            Permits theirs = other.semaphore("pool", 3).acquire(2, ZERO);

            engine.acquireCalls.set(0);
            CompletableFuture<Optional<Permits>> blocking = CompletableFuture.supplyAsync(() -> {
                try {
                    return pool.tryAcquire(2, Duration.ofSeconds(1));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await("the take asked for the two held elsewhere", () -> engine.acquireCalls.get() >= 2);
            local.close();
            assertThat(blocking.get(10, TimeUnit.SECONDS))
                    .as("one of the two stays held elsewhere")
                    .isEmpty();
            assertThat(pool.availablePermits())
                    .as("the permit the take was released gets back to the pool")
                    .isEqualTo(1);

            local = pool.acquire(1, ZERO);
            engine.acquireCalls.set(0);
            CompletableFuture<Optional<Permits>> async = pool.tryAcquireAsync(2, Duration.ofSeconds(1));
            await("the async take asked for the two held elsewhere", () -> engine.acquireCalls.get() >= 2);
            local.close();
            assertThat(async.get(10, TimeUnit.SECONDS)).isEmpty();
            assertThat(pool.availablePermits()).isEqualTo(1);
            theirs.close();
        }
    }

    @Test
    void aTakeWhoseScanMeetsAnEngineErrorGivesBackWhatItTookAndFailsWithIt() throws Exception {
        String store = "scripted:local-notes-" + UUID.randomUUID();
        try (Cerberus other = Cerberus.connect(store);
                Cerberus mine = opened(Cerberus.connect(store))) {
            Scripted engine = ScriptedEngineProvider.last;
            DistributedSemaphore pool = mine.semaphore("pool", 2);
            engine.acquiresBeforeErrors.set(1);
            engine.acquireErrors.set(1);
            assertThatThrownBy(() -> pool.acquire(2, ZERO))
                    .as("the first permit taken, the ask for the second broken")
                    .isInstanceOf(AssertionError.class);
            assertThat(pool.availablePermits()).isEqualTo(2);

            Permits theirs = other.semaphore("pool", 2).acquire(2, ZERO);
            engine.acquireCalls.set(0);
            CompletableFuture<Permits> async = pool.acquireAsync(2, Duration.ofSeconds(10));
            await("the async take waits", () -> engine.acquireCalls.get() >= 3);
            engine.acquiresBeforeErrors.set(1); // the wait's grant; the scan for the second permit then breaks
            engine.acquireErrors.set(1);
            theirs.close();
            assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(AssertionError.class);
            assertThat(pool.availablePermits())
                    .as("the failed take holds nothing")
                    .isEqualTo(2);
        }
    }

    @Test
    void anAsyncTakeCancelledWhileItsScanIsOnItsWayGivesBackWhatTheScanTook() throws Exception {
        try (Cerberus mine = opened(Cerberus.connect("scripted:local-notes-" + UUID.randomUUID()))) {
            Scripted engine = ScriptedEngineProvider.last;
            DistributedSemaphore pool = mine.semaphore("pool", 1);
            CountDownLatch asking = new CountDownLatch(1);
            engine.acquireEntered.set(asking);
            engine.lastGranted = null;
            CompletableFuture<Optional<Permits>> take = pool.tryAcquireAsync(1, Duration.ofSeconds(10));
            assertThat(asking.await(5, TimeUnit.SECONDS)).as("the scan asks").isTrue();
            take.cancel(false);
            engine.releaseAcquire.countDown();
            await("the scan's ask is granted", () -> engine.lastGranted != null);
            await("the permit granted to the cancelled take is given back", () -> pool.availablePermits() == 1);
        }
    }

    /**
     * A waiter waits in the line of the permit its own client holds, so that permit's release wakes it and it takes
     * the permit with one ask (not a scan of every permit at its next round), and the permit is its own afterwards:
     * once released, the client's next take finds it.
     */
    @ParameterizedTest(name = "the client holds permit {0}")
    @ValueSource(ints = {0, 7})
    void aWaiterWaitsInTheLineOfThePermitItsClientHoldsAndTakesItAsItIsReleased(int held) throws Exception {
        String store = "scripted:local-notes-" + UUID.randomUUID();
        try (Cerberus other = Cerberus.connect(store);
                Cerberus mine = opened(Cerberus.connect(store))) {
            Scripted engine = ScriptedEngineProvider.last;
            engine.linesUp = true;
            DistributedSemaphore pool = mine.semaphore("pool", 10);
            Permits local = holding(pool, held);
            Permits theirs = other.semaphore("pool", 10).acquire(9, ZERO);

            engine.acquireCalls.set(0);
            CompletableFuture<Permits> waiter = new CompletableFuture<>();
            Thread thread = new Thread(() -> {
                try {
                    waiter.complete(pool.acquire(1, Duration.ofSeconds(20)));
                } catch (Throwable e) {
                    waiter.completeExceptionally(e);
                }
            });
            thread.start();
            await(
                    "three rounds of the waiter, and it waits",
                    () -> engine.acquireCalls.get() >= 27 && thread.getState() == Thread.State.TIMED_WAITING);
            engine.acquireCalls.set(0);
            local.close();
            Permits handed = waiter.get(10, TimeUnit.SECONDS);
            assertThat(handed.permits()).extracting(Permit::slot).containsExactly(held);
            assertThat(engine.acquireCalls.get())
                    .as("asks after the release: the waiter's, for the permit released")
                    .isEqualTo(1);

            theirs.close();
            Permits rest = pool.tryAcquire(9, ZERO).orElseThrow();
            handed.close();
            assertThat(pool.tryAcquire(1, ZERO))
                    .as("the permit handed over, once released, is free for this client")
                    .hasValueSatisfying(Permits::close);
            rest.close();
        }
    }

    @Test
    void aHoldListsItsPermitsBySlot() throws Exception {
        try (Cerberus mine = Cerberus.connect("mem:local-notes-" + UUID.randomUUID());
                Permits all = mine.semaphore("pool", 10).acquire(10, ZERO)) {
            assertThat(all.permits()).extracting(Permit::slot).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
            assertThat(all.id()).startsWith("0:").contains(",9:");
        }
    }

    @Test
    void aPermitLostToAForcedReleaseIsFreeForItsClientsNextTake() throws Exception {
        String store = "mem:local-notes-" + UUID.randomUUID();
        try (Cerberus mine = Cerberus.builder()
                        .engine(store)
                        .defaultLease(Duration.ofMillis(300))
                        .build();
                Cerberus operator = Cerberus.connect(store)) {
            DistributedSemaphore pool = mine.semaphore("pool", 2);
            Permits kept = pool.acquire(1, ZERO); // keeps the client's notes of the semaphore all along
            Permits lost = pool.acquire(1, ZERO);
            assertThat(operator.semaphore("pool", 2).release(lost.id())).isTrue();
            await("the holder learns of the loss", () -> !lost.isValid());
            await("the lost permit is free for this client", () -> {
                try {
                    Optional<Permits> again = pool.tryAcquire(1, ZERO);
                    again.ifPresent(Permits::close);
                    return again.isPresent();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            kept.close();
        }
    }

    /** @return a hold of exactly the given permit, taken one permit at a time */
    private static Permits holding(DistributedSemaphore pool, int slot) throws InterruptedException {
        List<Permits> others = new ArrayList<>();
        try {
            while (true) {
                Permits one = pool.acquire(1, ZERO);
                if (one.permits().get(0).slot() == slot) {
                    return one;
                }
                others.add(one);
            }
        } finally {
            others.forEach(Permits::close);
        }
    }

    /** @return the client, its engine opened (so {@link ScriptedEngineProvider#last} is its engine) */
    private static Cerberus opened(Cerberus cerberus) {
        io.cerberus.DistributedLock lock = cerberus.lock("open-the-engine");
        if (lock.tryLock()) {
            lock.unlock();
        }
        return cerberus;
    }

    private static void await(String what, BooleanSupplier condition) {
        Await.until(what, Timeouts.scaled(Duration.ofSeconds(10)), condition);
    }
}
