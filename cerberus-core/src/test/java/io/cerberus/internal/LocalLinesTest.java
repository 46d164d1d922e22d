package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.ScriptedEngineProvider.RenewalMode;
import io.cerberus.local.ScriptedEngineProvider.Scripted;
import io.cerberus.servers.Await;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The local line of exclusive waiters ({@link LocalLines}), through a client of an engine that asks for it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LocalLinesTest {
    private static final double SCALE = Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1"));

    /** Lines whose head waits as each busy answer says. */
    private static final LinesUpLocally NO_BACKOFF = new LinesUpLocally() {};
    /** Lines whose head backs off from 20 ms up to 160 ms. */
    private static final LinesUpLocally BACKOFF = new LinesUpLocally() {
        @Override
        public Duration firstBackoff() {
            return Duration.ofMillis(20);
        }

        @Override
        public Duration maxBackoff() {
            return Duration.ofMillis(160);
        }
    };

    private final List<Cerberus> clients = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private Scripted engine;

    /** A client of a new store whose exclusive waiters race, as Redis's do. */
    private Cerberus client(boolean linesUp) {
        return client(linesUp, UUID.randomUUID().toString());
    }

    private Cerberus client(boolean linesUp, String store) {
        Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + store)
                .defaultLease(Duration.ofSeconds(5))
                .build();
        clients.add(cerberus);
        cerberus.lock("open-the-engine").tryLock();
        engine = ScriptedEngineProvider.last;
        engine.linesUp = linesUp;
        engine.racing = true;
        engine.acquireCalls.set(0);
        return cerberus;
    }

    @AfterEach
    void close() throws InterruptedException {
        clients.forEach(Cerberus::close);
        for (Thread thread : threads) {
            thread.interrupt();
            thread.join(TimeUnit.SECONDS.toMillis(5));
        }
    }

    private static long bound(long millis) {
        return (long) (millis * SCALE);
    }

    private static void await(String what, BooleanSupplier condition) {
        await(what, condition, 5000);
    }

    private static void await(String what, BooleanSupplier condition, long millis) {
        Await.until(what, Duration.ofMillis(bound(millis)), condition);
    }

    /** Starts a thread that locks, records its name, unlocks; returns when it waits for the lock. */
    private Thread waiter(String name, DistributedLock lock, List<String> granted) throws InterruptedException {
        Thread thread = new Thread(
                () -> {
                    lock.lock();
                    granted.add(name);
                    lock.unlock();
                },
                name);
        threads.add(thread);
        thread.start();
        await(
                name + " waits",
                () -> thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING);
        return thread;
    }

    /** Both waiters count: the head, told busy by the engine, and the one behind it, which never asks. */
    @Test
    void waitsInLineBehindAnotherThreadOfTheClientAreCountedAsContention() throws Exception {
        Cerberus cerberus = client(true);
        engine.racing = false;
        DistributedLock lock = cerberus.lock("queue");
        assertThat(lock.tryLock()).isTrue();
        long start = System.nanoTime();
        List<CompletableFuture<Boolean>> waiters = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            waiters.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return lock.tryLock(300, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<Boolean> waiter : waiters) {
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isFalse();
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        lock.unlock();
        io.cerberus.LockContention seen = cerberus.contention().stream()
                .filter(contention -> contention.name().equals("queue"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no contention recorded for 'queue'"));
        assertThat(seen.contended()).isEqualTo(2);
        assertThat(seen.timedOut()).isEqualTo(2);
        assertThat(seen.longestWait()).isBetween(Duration.ofMillis(300), elapsed);
    }

    /** A grant answered after its lease ran out is given back; its line must not stay with it. */
    @Test
    void aGrantGivenBackForComingLateLeavesItsLineToTheNext() throws Exception {
        DistributedLock lock = client(true).lock("late");
        engine.racing = false;
        engine.grantedAge = Duration.ofSeconds(6); // every grant reads as sent 6 s ago: past its lease of 5 s
        assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS))
                .as("every grant came late and was given back")
                .isFalse();
        assertThat(engine.acquireCalls.get())
                .as("asked again after each grant given back")
                .isGreaterThan(1);
        engine.grantedAge = null;
        CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
            try {
                return lock.tryLock(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(other.get(10, TimeUnit.SECONDS))
                .as("another thread of the client takes the lock: no given-back grant keeps the line")
                .isTrue();
    }

    @Test
    void aThreadThatReleasesAndAsksAgainGoesBehindTheWaitersOfItsClient() throws Exception {
        assertThat(releaserOrder(true)).containsExactly("first", "second", "releaser");
    }

    @Test
    void withoutTheLineTheReleasingThreadWinsAgain() throws Exception {
        // the behaviour the line exists to prevent, shown on the same engine without it
        assertThat(releaserOrder(false)).startsWith("releaser");
    }

    private List<String> releaserOrder(boolean linesUp) throws Exception {
        DistributedLock lock = client(linesUp).lock("order");
        List<String> granted = new CopyOnWriteArrayList<>();
        lock.lock();
        Thread first = waiter("first", lock, granted);
        Thread second = waiter("second", lock, granted);
        lock.unlock();
        lock.lock();
        granted.add("releaser");
        lock.unlock();
        first.join(bound(5000));
        second.join(bound(5000));
        assertThat(first.isAlive() || second.isAlive()).as("waiters done").isFalse();
        return granted;
    }

    @Test
    void aHandOffBetweenThreadsOfOneClientIsOneAcquire() throws Exception {
        DistributedLock lock = client(true).lock("hand-offs");
        int threadCount = 4;
        int cycles = 200;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            done.add(CompletableFuture.runAsync(
                    () -> {
                        for (int i = 0; i < cycles; i++) {
                            lock.lock();
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                            lock.unlock();
                        }
                    },
                    runnable -> {
                        Thread thread = new Thread(runnable);
                        threads.add(thread);
                        thread.start();
                    }));
        }
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(bound(20_000), TimeUnit.MILLISECONDS);
        assertThat(overlaps.get()).as("two holders at once").isZero();
        assertThat(engine.acquireCalls.get())
                .as("engine acquires for %d grants", threadCount * cycles)
                .isEqualTo(threadCount * cycles);
    }

    @Test
    void aReleaseHandsTheLockToTheSleepingHeadAtMostFourTimesInARow() throws Exception {
        Cerberus cerberus = client(true);
        DistributedLock lock = cerberus.lock("handed");
        engine.handsOver = true;
        Lease first = lock.acquire(Duration.ofSeconds(5));
        engine.acquireCalls.set(0);
        int waiters = LocalLines.HAND_OFFS_IN_A_ROW + 2;
        List<String> order = new CopyOnWriteArrayList<>();
        List<Long> fences = new CopyOnWriteArrayList<>();
        List<String> notHeldOnTheEngine = new CopyOnWriteArrayList<>();
        List<Thread> line = new ArrayList<>();
        for (int i = 1; i <= waiters; i++) {
            String name = "waiter-" + i;
            Thread thread = new Thread(
                    () -> {
                        try (Lease lease = lock.acquire(Duration.ofMillis(bound(10_000)))) {
                            order.add(name);
                            fences.add(lease.fencingToken());
                            if (!lock.isLocked()) {
                                notHeldOnTheEngine.add(name);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    name);
            threads.add(thread);
            thread.start();
            await(name + " waits", () -> thread.getState() == Thread.State.TIMED_WAITING);
            line.add(thread);
        }
        assertThat(engine.acquireCalls.get())
                .as("waiters behind a hold of their own client do not ask")
                .isZero();
        first.close();
        for (Thread thread : line) {
            thread.join(bound(5000));
            assertThat(thread.isAlive()).as("%s done", thread.getName()).isFalse();
        }
        assertThat(notHeldOnTheEngine)
                .as("waiters whose lock the engine did not hold while they held it")
                .isEmpty();
        assertThat(order)
                .as("served in turn")
                .containsExactly(line.stream().map(Thread::getName).toArray(String[]::new));
        for (int i = 1; i < fences.size(); i++) {
            assertThat(fences.get(i)).as("fence of %s", order.get(i)).isGreaterThan(fences.get(i - 1));
        }
        assertThat(engine.handedOver.get())
                .as("4 hand-offs, a release for all, then hand-offs again")
                .isEqualTo(LocalLines.HAND_OFFS_IN_A_ROW + 1);
        assertThat(engine.acquireCalls.get())
                .as("only the waiter after the release for all asked")
                .isEqualTo(1);
        assertThat(cerberus.contention())
                .filteredOn(contention -> contention.name().equals("handed"))
                .singleElement()
                .satisfies(contention -> assertThat(contention.contended())
                        .as("every waiter waited, those handed the lock without ever asking too")
                        .isEqualTo(waiters));
    }

    /** @return whether a thread of its own took {@code lock} within {@code millis} (scaled); it releases it at once */
    private static CompletableFuture<Boolean> takeAndReleaseAsync(DistributedLock lock, long millis) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                boolean taken = lock.tryLock(bound(millis), TimeUnit.MILLISECONDS);
                if (taken) {
                    lock.unlock();
                }
                return taken;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Starts a thread that acquires {@code lock} and completes with {@code seen} of its lease; returns when it sleeps in line. */
    private CompletableFuture<Long> sleeperInLine(DistributedLock lock, java.util.function.ToLongFunction<Lease> seen)
            throws InterruptedException {
        CompletableFuture<Long> result = new CompletableFuture<>();
        Thread thread = new Thread(
                () -> {
                    try (Lease lease = lock.acquire(Duration.ofMillis(bound(10_000)))) {
                        result.complete(seen.applyAsLong(lease));
                    } catch (InterruptedException | RuntimeException e) {
                        result.completeExceptionally(e);
                    }
                },
                "in-line");
        threads.add(thread);
        thread.start();
        await("the waiter sleeps in line", () -> thread.getState() == Thread.State.TIMED_WAITING);
        return result;
    }

    /** On an engine that takes turns, a release within the client's turn hands the lock to its waiter. */
    @Test
    void withinItsTurnAReleaseHandsTheLockToTheClientsWaiterThoughAnotherClientWaits() throws Exception {
        Cerberus cerberus = client(true);
        DistributedLock lock = cerberus.lock("turns");
        engine.takesTurns = true;
        engine.othersWait = true;
        Lease first = lock.acquire(Duration.ofSeconds(5));
        engine.acquireCalls.set(0);
        CompletableFuture<Long> next = sleeperInLine(lock, Lease::fencingToken);
        first.close();
        assertThat(next.get(bound(5000), TimeUnit.MILLISECONDS)).isGreaterThan(first.fencingToken());
        assertThat(engine.turnReleases)
                .as("the release was told it is within the turn")
                .startsWith(true);
        assertThat(engine.handedOver.get()).as("handed over by the release").isEqualTo(1);
        assertThat(engine.acquireCalls.get()).as("the waiter never asked").isZero();
    }

    /** On an engine that takes turns, a hold no line ever waited for is released plainly, told it has no turn. */
    @Test
    void onAnEngineThatTakesTurnsAHoldWithoutALineIsReleasedPlainly() throws Exception {
        Cerberus cerberus = client(true);
        DistributedLock lock = cerberus.lock("no-line");
        engine.takesTurns = true;
        assertThat(lock.tryLock()).as("taken without a wait: no line").isTrue();
        lock.unlock();
        assertThat(engine.turnReleases).as("one release, no streak to keep").containsExactly(false);
        assertThat(lock.tryLock()).as("free again").isTrue();
        lock.unlock();
    }

    /** Past its turn, with another client waiting, a release yields: the line holds back before it asks. */
    @Test
    void pastItsTurnAReleaseYieldsToTheOtherClientAndTheLineHoldsBack() throws Exception {
        Cerberus cerberus = client(true);
        DistributedLock lock = cerberus.lock("yield");
        engine.takesTurns = true;
        engine.othersWait = true;
        engine.turn = Duration.ZERO;
        engine.holdBack = Duration.ofMillis(bound(400));
        Lease first = lock.acquire(Duration.ofSeconds(5));
        engine.acquireCalls.set(0);
        CompletableFuture<Long> next = sleeperInLine(lock, lease -> System.nanoTime());
        long released = System.nanoTime();
        first.close();
        long granted = next.get(bound(5000), TimeUnit.MILLISECONDS);
        assertThat(engine.turnReleases)
                .as("the release was told the turn is over")
                .startsWith(false);
        assertThat(engine.handedOver.get()).as("not handed over").isZero();
        assertThat(Duration.ofNanos(granted - released))
                .as("the line held back before its head asked")
                .isGreaterThanOrEqualTo(Duration.ofMillis(bound(400)));
    }

    @Test
    void aLockHandedToAWaiterThatGaveUpMeanwhileIsReleased() throws Exception {
        DistributedLock lock = client(true).lock("gave-up");
        engine.handsOver = true;
        Lease first = lock.acquire(Duration.ofSeconds(5));
        AtomicInteger got = new AtomicInteger();
        Thread head = new Thread(
                () -> {
                    try {
                        lock.acquire(Duration.ofMillis(bound(10_000))).close();
                        got.incrementAndGet();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "head");
        threads.add(head);
        head.start();
        await("the head waits", () -> head.getState() == Thread.State.TIMED_WAITING);
        CountDownLatch entered = new CountDownLatch(1);
        engine.handOverEntered.set(entered);
        CompletableFuture<Void> release = CompletableFuture.runAsync(first::close);
        assertThat(entered.await(bound(5000), TimeUnit.MILLISECONDS))
                .as("the release hands over")
                .isTrue();
        head.interrupt();
        head.join(bound(5000));
        assertThat(head.isAlive()).isFalse();
        engine.releaseHandOver.countDown();
        release.get(bound(5000), TimeUnit.MILLISECONDS);
        assertThat(got.get()).as("the interrupted waiter got nothing").isZero();
        assertThat(engine.handedOver.get()).isEqualTo(1);
        assertThat(lock.isLocked())
                .as("the hold handed to the waiter that left is released")
                .isFalse();
    }

    @Test
    void onAnEngineThatTakesTurnsReleasingAHoldTheStoreNoLongerHadThrowsTheLoss() throws Exception {
        DistributedLock lock = client(true).lock("turn-dropped");
        engine.takesTurns = true;
        Lease first = lock.acquire(Duration.ofSeconds(5));
        engine.dropInStore(engine.lastGranted);
        assertThatThrownBy(first::close)
                .as("the store no longer had the hold")
                .isInstanceOf(io.cerberus.LockLostException.class);
    }

    /** A hand-off whose request fails hands nothing: the head waits for the store to free the lock. */
    @Test
    void aHandOffWhoseRequestFailsHandsTheHeadNothing() throws Exception {
        DistributedLock lock = client(true).lock("hand-off-fails");
        engine.handsOver = true;
        Duration lease = Duration.ofMillis(bound(800));
        long start = System.nanoTime();
        Lease first = lock.acquire(Duration.ofSeconds(5), lease);
        CompletableFuture<Long> head = sleeperInLine(lock, Lease::fencingToken);
        engine.releaseFailures.set(1); // the release's hand-off
        assertThatThrownBy(first::close).isInstanceOf(io.cerberus.EngineUnavailableException.class);
        assertThat(head.get(bound(10_000), TimeUnit.MILLISECONDS))
                .as("granted by the store, after the first hold")
                .isGreaterThan(first.fencingToken());
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("once the first hold's lease was over in the store")
                .isGreaterThanOrEqualTo(lease);
        assertThat(engine.handedOver.get()).isZero();
    }

    /** The engine declines a hand-off (a waiter of another client is ahead in its queue): the head is not handed it. */
    @Test
    void aHandOffTheEngineDeclinesLeavesTheLockToWhomTheEngineGivesIt() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("declined");
        engine.racing = false; // a busy answer queues the other client's waiter in the store
        Scripted otherEngine = engine;
        DistributedLock lock = client(true, store).lock("declined");
        engine.racing = false;
        engine.handsOver = true;
        Lease first = lock.acquire(Duration.ofSeconds(5));
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
            try {
                assertThat(elsewhere.tryLock(bound(10_000), TimeUnit.MILLISECONDS))
                        .isTrue();
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                Thread.sleep(bound(200)); // the work under the lock
                inside.decrementAndGet();
                elsewhere.unlock();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await("the other client's waiter is queued in the store", () -> otherEngine.acquireCalls.get() > 0);
        CompletableFuture<Long> head = sleeperInLine(lock, lease -> {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            inside.decrementAndGet();
            return lease.fencingToken();
        });
        first.close();
        assertThat(head.get(bound(10_000), TimeUnit.MILLISECONDS)).isGreaterThan(first.fencingToken());
        other.get(bound(10_000), TimeUnit.MILLISECONDS);
        assertThat(engine.handOverCalls.get())
                .as("the release offered the lock to the head")
                .isEqualTo(1);
        assertThat(engine.handedOver.get()).as("the engine declined").isZero();
        assertThat(overlaps.get()).as("two holders at once").isZero();
    }

    @Test
    void aReleaseThatWouldHandOverAHoldTheStoreNoLongerHadThrowsTheLossAndTheWaiterStillGetsTheLock() throws Exception {
        DistributedLock lock = client(true).lock("dropped");
        engine.handsOver = true;
        Lease first = lock.acquire(Duration.ofSeconds(5));
        io.cerberus.spi.Acquisition held = engine.lastGranted;
        List<String> granted = new CopyOnWriteArrayList<>();
        Thread waiter = waiter("waiter", lock, granted);
        engine.dropInStore(held);

        assertThatThrownBy(first::close)
                .as("the store no longer had the hold the release would hand over")
                .isInstanceOf(io.cerberus.LockLostException.class);
        waiter.join(bound(5000));
        assertThat(granted).containsExactly("waiter");
        assertThat(engine.handOverCalls.get())
                .as("the release tried to hand over")
                .isEqualTo(1);
        assertThat(engine.handedOver.get()).isZero();
    }

    @Test
    void aWaiterThatGivesUpPassesItsTurnOn() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("gives-up");
        elsewhere.lock();
        DistributedLock lock = client(true, store).lock("gives-up");
        CountDownLatch gaveUp = new CountDownLatch(1);
        Thread head = new Thread(
                () -> {
                    try {
                        assertThat(lock.tryLock(bound(300), TimeUnit.MILLISECONDS))
                                .isFalse();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    gaveUp.countDown();
                },
                "head");
        threads.add(head);
        head.start();
        await("head asks", () -> engine.acquireCalls.get() >= 1);
        List<String> granted = new CopyOnWriteArrayList<>();
        Thread next = waiter("next", lock, granted);
        assertThat(gaveUp.await(bound(5000), TimeUnit.MILLISECONDS))
                .as("head gave up")
                .isTrue();
        // at once, not at the next recheck of its place (a second later)
        int askedBefore = engine.acquireCalls.get();
        await(
                "next asks in its place",
                () -> engine.acquireCalls.get() > askedBefore,
                LocalLines.RECHECK_NANOS / 2_000_000);
        elsewhere.unlock();
        next.join(bound(5000));
        assertThat(granted).containsExactly("next");
    }

    /** A head that asked the engine and gave up withdraws its ask there too: it keeps no place in the engine's queue. */
    @Test
    void aHeadThatAskedAndGaveUpLeavesNoPlaceInTheEnginesQueue() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("queued");
        engine.racing = false; // a busy answer queues the attempt in the store, as a fair engine's does
        elsewhere.lock();
        DistributedLock lock = client(true, store).lock("queued");
        engine.racing = false;
        assertThat(lock.tryLock(bound(200), TimeUnit.MILLISECONDS)).isFalse();
        assertThat(engine.acquireCalls.get()).as("the head asked").isPositive();
        elsewhere.unlock();
        assertThat(elsewhere.tryLock())
                .as("free for the next asker: no withdrawn attempt is ahead of it in the store's queue")
                .isTrue();
        elsewhere.unlock();
    }

    @Test
    void aHeadWhoseAskMeetsAnErrorLeavesTheLineToTheNext() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("broken");
        elsewhere.lock();
        DistributedLock lock = client(true, store).lock("broken");
        CompletableFuture<Throwable> headEnded = new CompletableFuture<>();
        Thread head = new Thread(
                () -> {
                    try {
                        lock.tryLock(bound(5000), TimeUnit.MILLISECONDS);
                        headEnded.complete(null);
                    } catch (Throwable e) {
                        headEnded.complete(e);
                    }
                },
                "head");
        threads.add(head);
        head.start();
        await("head asks", () -> engine.acquireCalls.get() >= 1);
        List<String> granted = new CopyOnWriteArrayList<>();
        Thread next = waiter("next", lock, granted);
        engine.acquireErrors.set(1); // the head's next ask
        assertThat(headEnded.get(bound(5000), TimeUnit.MILLISECONDS))
                .as("the head's call ends with the engine's Error")
                .isInstanceOf(AssertionError.class)
                .hasMessage("scripted engine broken");
        elsewhere.unlock();
        next.join(bound(5000));
        assertThat(granted)
                .as("the next in line asks in its turn and is granted")
                .containsExactly("next");
    }

    /** The head's ask finds the engine unreachable: it tries again within its wait, from a new place in line. */
    @Test
    void aHeadWhoseAskFindsTheEngineUnreachableAsksAgainWithinItsWaitAndIsGranted() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("unreachable");
        elsewhere.lock();
        DistributedLock lock = client(true, store).lock("unreachable");
        CompletableFuture<Boolean> head = takeAndReleaseAsync(lock, 5000);
        await("head asks", () -> engine.acquireCalls.get() >= 1);
        engine.unreachableAcquires.set(1); // the head's next ask
        await("the head's ask found the engine unreachable", () -> engine.unreachableAcquires.get() == 0);
        elsewhere.unlock();
        assertThat(head.get(bound(10_000), TimeUnit.MILLISECONDS))
                .as("asked again once the engine answered, and granted")
                .isTrue();
    }

    /** A waiter that follows a switch to another engine leaves its line on the old one, which its client may use again. */
    @Test
    void aWaiterThatFollowsASwitchLeavesItsLineOnTheEngineItLeft() throws Exception {
        String one = "scripted:" + UUID.randomUUID();
        String two = "scripted:" + UUID.randomUUID();
        DistributedLock elsewhere =
                client(false, one.substring("scripted:".length())).lock("switched");
        elsewhere.lock();
        Cerberus cerberus = Cerberus.builder()
                .engine("one", one)
                .engine("two", two)
                .lockDelay(Duration.ZERO)
                .build();
        clients.add(cerberus);
        cerberus.switchEngine("two");
        cerberus.lock("open-the-engine").tryLock(); // a standby may open when first used
        cerberus.switchEngine("one");
        for (String uri : List.of(one, two)) {
            ScriptedEngineProvider.opened(uri).linesUp = true;
            ScriptedEngineProvider.opened(uri).racing = true;
        }
        DistributedLock lock = cerberus.lock("switched");
        CompletableFuture<String> follower = CompletableFuture.supplyAsync(() -> {
            try {
                try (Lease lease =
                        lock.tryAcquire(Duration.ofMillis(bound(5000))).orElseThrow()) {
                    return lease.engineName();
                }
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await(
                "the waiter asks engine one",
                () -> ScriptedEngineProvider.opened(one).acquireCalls.get() >= 1);
        cerberus.switchEngine("two");
        assertThat(follower.get(bound(5000), TimeUnit.MILLISECONDS))
                .as("the wait went on on engine two")
                .isEqualTo("two");
        cerberus.switchEngine("one");
        elsewhere.unlock();
        assertThat(lock.tryLock(bound(2000), TimeUnit.MILLISECONDS))
                .as("a new waiter on engine one is not behind the one that left for engine two")
                .isTrue();
        lock.unlock();
    }

    /**
     * A {@code tryLock()} without a wait does not line up, but once granted its hold is the one the line waits for:
     * the head stops asking until it ends, and is woken by its release.
     */
    @Test
    void theHoldOfATryLockWithoutWaitIsTheOneTheLineWaitsFor() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("barged");
        elsewhere.lock();
        DistributedLock lock = client(true, store).lock("barged");
        CompletableFuture<Boolean> head = takeAndReleaseAsync(lock, 10_000);
        await("head asks", () -> engine.acquireCalls.get() >= 1);
        CountDownLatch asking = new CountDownLatch(1);
        engine.acquireEntered.set(asking); // the head's next ask waits in the engine
        assertThat(asking.await(bound(5000), TimeUnit.MILLISECONDS)).isTrue();
        elsewhere.unlock();
        assertThat(lock.tryLock()).as("a try without a wait barges in").isTrue();
        int asked = engine.acquireCalls.get();
        engine.releaseAcquire.countDown(); // the head is told busy
        Thread.sleep(bound(300)); // an interval in which the head must not ask: its client holds the lock
        assertThat(engine.acquireCalls.get())
                .as("the head asks no more while the barging hold lasts")
                .isEqualTo(asked);
        assertThat(head).isNotDone();
        lock.unlock();
        assertThat(head.get(bound(5000), TimeUnit.MILLISECONDS))
                .as("the release woke the head")
                .isTrue();
    }

    @Test
    void anAsyncHeadWhoseAskMeetsAnErrorLeavesTheLineToTheNext() throws Exception {
        String store = UUID.randomUUID().toString();
        DistributedLock elsewhere = client(false, store).lock("broken-async");
        elsewhere.lock();
        DistributedLock lock = client(true, store).lock("broken-async");
        CompletableFuture<Optional<io.cerberus.Lease>> head = lock.tryAcquireAsync(Duration.ofMillis(bound(5000)));
        await("head asks", () -> engine.acquireCalls.get() >= 1);
        List<String> granted = new CopyOnWriteArrayList<>();
        Thread next = waiter("next", lock, granted);
        engine.acquireErrors.set(1); // the head's next ask
        assertThatThrownBy(() -> head.get(bound(5000), TimeUnit.MILLISECONDS))
                .as("the async head's future fails with the engine's Error")
                .hasCauseInstanceOf(AssertionError.class);
        elsewhere.unlock();
        next.join(bound(5000));
        assertThat(granted)
                .as("the next in line asks in its turn and is granted")
                .containsExactly("next");
    }

    @Test
    void anAsyncWaiterInLineBehindAHoldOfItsClientEndsAtItsWaitLimit() throws Exception {
        DistributedLock lock = client(true).lock("async-in-line");
        try (Lease held = lock.acquire(Duration.ofSeconds(5))) {
            engine.acquireCalls.set(0);
            assertThat(lock.tryAcquireAsync(Duration.ofMillis(bound(200))).get(bound(5000), TimeUnit.MILLISECONDS))
                    .as("its client's hold stays all along")
                    .isEmpty();
            assertThat(held.isValid()).isTrue();
            assertThat(engine.acquireCalls.get())
                    .as("a waiter behind a hold of its client does not ask")
                    .isZero();
        }
    }

    @Test
    void theLossOfTheHoldTheLineWaitsForWakesTheHead() throws Exception {
        Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + UUID.randomUUID())
                .defaultLease(Duration.ofMillis(300))
                .build();
        clients.add(cerberus);
        DistributedLock lock = cerberus.lock("lost");
        lock.lock();
        engine = ScriptedEngineProvider.last;
        engine.linesUp = true;
        lock.unlock();
        lock.lock();
        List<String> granted = new CopyOnWriteArrayList<>();
        Thread next = waiter("next", lock, granted);
        engine.renewals = RenewalMode.REFUSE;
        next.join(bound(5000));
        assertThat(granted).as("granted after the hold it waited for was lost").containsExactly("next");
        assertThatThrownBy(lock::unlock).isInstanceOf(io.cerberus.LockLostException.class);
    }

    @Test
    void aHoldOfThisClientThatOutlivesItsLeaseUnrenewedHoldsTheLineOnlyUntilItsLocalEnd() throws Exception {
        Duration lease = Duration.ofMillis(300);
        Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + UUID.randomUUID())
                .defaultLease(lease)
                .build();
        clients.add(cerberus);
        cerberus.lock("open-the-engine").acquire(Duration.ZERO).close();
        engine = ScriptedEngineProvider.last;
        engine.linesUp = true;
        CountDownLatch renewing = new CountDownLatch(1);
        engine.renewalEntered.set(renewing); // the hold's first renewal never comes back: not renewed, not lost
        DistributedLock lock = cerberus.lock("outlived");
        long heldAt = System.nanoTime();
        Lease held = lock.acquire(Duration.ofSeconds(1)); // with a wait, so through the line: it marks the hold
        try {
            assertThat(renewing.await(bound(2000), TimeUnit.MILLISECONDS)).isTrue();
            Lease next = lock.acquire(Duration.ofSeconds(5));
            Duration after = Duration.ofNanos(System.nanoTime() - heldAt);
            assertThat(held.isValid()).isFalse();
            assertThat(after)
                    .as("granted once the first hold's lease ran out here, not at the line's next recheck (1 s)")
                    .isLessThan(lease.plusMillis(bound(450)));
            next.close();
        } finally {
            engine.releaseRenewal.countDown();
        }
    }

    @Test
    void aTryLockWithoutWaitStillAsks() throws Exception {
        Cerberus cerberus = client(true);
        DistributedLock lock = cerberus.lock("no-wait");
        lock.lock();
        CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(lock::tryLock);
        assertThat(other.get(bound(5000), TimeUnit.MILLISECONDS)).isFalse();
        assertThat(engine.acquireCalls.get())
                .as("asked the engine, did not line up")
                .isEqualTo(2);
        lock.unlock();
        CompletableFuture<Boolean> free = CompletableFuture.supplyAsync(() -> {
            boolean taken = lock.tryLock();
            if (taken) {
                lock.unlock();
            }
            return taken;
        });
        assertThat(free.get(bound(5000), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void closingTheClientWakesItsWaiters() throws Exception {
        Cerberus cerberus = client(true);
        DistributedLock lock = cerberus.lock("closing");
        lock.lock();
        List<CompletableFuture<Void>> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CompletableFuture<Void> failed = new CompletableFuture<>();
            Thread thread = new Thread(
                    () -> {
                        try {
                            lock.lock();
                            failed.complete(null);
                        } catch (RuntimeException e) {
                            failed.completeExceptionally(e);
                        }
                    },
                    "waiter-" + i);
            threads.add(thread);
            thread.start();
            waiting.add(failed);
        }
        await(
                "three waiters",
                () -> threads.stream()
                        .allMatch(t ->
                                t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING));
        long closedAt = System.nanoTime();
        cerberus.close();
        for (CompletableFuture<Void> failed : waiting) {
            assertThatThrownBy(() -> failed.get(bound(2000), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closedAt))
                .as("woken by the close, not at their next look a second after they began to wait")
                .isLessThan(bound(600));
    }

    @Test
    void linesLastOnlyWhileTheyHaveWaitersOrAHold() {
        LocalLines lines = new LocalLines(token -> Long.MAX_VALUE);
        Object engineHandle = new Object();
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket first = lines.enter(engineHandle, attempt(key), NO_BACKOFF);
        LocalLines.Ticket second = lines.enter(engineHandle, attempt(key), NO_BACKOFF);
        assertThat(first.mayAsk()).isTrue();
        assertThat(second.mayAsk()).as("not the head").isFalse();
        first.granted("t1");
        assertThat(second.mayAsk()).as("head, but the line waits for t1").isFalse();
        second.leave();
        assertThat(lines.size()).as("the hold keeps the line").isEqualTo(1);
        lines.ended(engineHandle, key, "t1");
        assertThat(lines.size()).isZero();

        LocalLines.Ticket alone = lines.enter(engineHandle, attempt(key), NO_BACKOFF);
        alone.leave();
        assertThat(lines.size()).isZero();
        lines.grantedOutOfLine(engineHandle, key, "t2");
        assertThat(lines.size()).as("no line made for a grant out of line").isZero();
    }

    private static io.cerberus.spi.Acquisition attempt(LockKey key) {
        return new io.cerberus.spi.Acquisition(
                key, io.cerberus.spi.LockMode.EXCLUSIVE, UUID.randomUUID().toString(), "test", Duration.ofSeconds(5));
    }

    @Test
    void aMarkWhoseHoldIsNoLongerLiveIsIgnored() {
        LocalLines lines = new LocalLines(token -> 0L);
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket first = lines.enter(this, attempt(key), NO_BACKOFF);
        LocalLines.Ticket second = lines.enter(this, attempt(key), NO_BACKOFF);
        first.granted("gone");
        assertThat(second.mayAsk()).as("the mark names no live hold").isTrue();
    }

    @Test
    void aBusyAnswerNamingALiveHoldOfThisClientMakesTheHeadWaitForItsEnd() {
        Map<String, Long> live = new ConcurrentHashMap<>(Map.of("mine", Long.MAX_VALUE));
        LocalLines lines = new LocalLines(token -> live.getOrDefault(token, 0L));
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket head = lines.enter(this, attempt(key), BACKOFF);
        assertThat(head.mayAsk()).isTrue();
        assertThat(head.afterBusy(new AcquireResult.Busy(Duration.ofSeconds(5), "mine", 7)))
                .as("wait in line")
                .isEqualTo(-1);
        assertThat(head.mayAsk()).as("the lock is held in this client").isFalse();
        lines.ended(this, key, "mine");
        assertThat(head.mayAsk()).as("its end lets the head ask").isTrue();

        assertThat(head.afterBusy(new AcquireResult.Busy(Duration.ofSeconds(5), "released-already", 8)))
                .as("a holder that is no live hold here: pause")
                .isNotNegative();
        assertThat(head.mayAsk()).isTrue();
    }

    @Test
    void theMarkOfAHoldEndsWithItsLocalLease() {
        AtomicLong left = new AtomicLong(Long.MAX_VALUE);
        LocalLines lines = new LocalLines(token -> left.get());
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket first = lines.enter(this, attempt(key), NO_BACKOFF);
        LocalLines.Ticket second = lines.enter(this, attempt(key), NO_BACKOFF);
        first.granted("unrenewed");
        assertThat(second.mayAsk()).isFalse();
        left.set(0);
        assertThat(second.mayAsk())
                .as("the hold's lease ran out by this client's clock")
                .isTrue();
    }

    @Test
    void theHeadBacksOffByTheEnginesBackoffAndStartsAgainWhenTheLockChangesHandsElsewhere() {
        LocalLines lines = new LocalLines(token -> 0L);
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket head = lines.enter(this, attempt(key), BACKOFF);
        Duration bound = Duration.ofSeconds(10);
        long[] ceilings = {20, 40, 80, 160, 160};
        for (long ceiling : ceilings) {
            assertThat(head.afterBusy(new AcquireResult.Busy(bound, "elsewhere", 1)))
                    .isBetween(TimeUnit.MILLISECONDS.toNanos(ceiling / 2), TimeUnit.MILLISECONDS.toNanos(ceiling));
        }
        assertThat(head.afterBusy(new AcquireResult.Busy(bound, "elsewhere-next", 2)))
                .as("a new holder's fence: from the first pause")
                .isBetween(TimeUnit.MILLISECONDS.toNanos(10), TimeUnit.MILLISECONDS.toNanos(20));
        assertThat(head.afterBusy(new AcquireResult.Busy(Duration.ofMillis(3), "elsewhere-next", 2)))
                .as("never past the answer's bound")
                .isLessThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(3));

        LocalLines.Ticket plain = lines.enter(new Object(), attempt(key), NO_BACKOFF);
        assertThat(plain.afterBusy(new AcquireResult.Busy(Duration.ofMillis(700))))
                .as("no backoff: as the answer says")
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(700));
    }

    @Test
    void aTurnLastsFromTheRunsFirstGrantUntilAHolderElsewhereIsSeen() {
        LocalLines lines = new LocalLines(token -> Long.MAX_VALUE);
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket first = lines.enter(this, attempt(key), NO_BACKOFF);
        LocalLines.Ticket second = lines.enter(this, attempt(key), NO_BACKOFF);
        first.granted("t1");
        LocalLines.Turn turn = lines.turnAt(this, key, "t1", Duration.ofHours(1));
        assertThat(turn.withinTurn()).as("the streak began just now").isTrue();
        assertThat(turn.handOver())
                .as("the head is not asleep: nothing to hand")
                .isNull();
        assertThat(lines.turnAt(this, key, "t1", Duration.ZERO).withinTurn())
                .as("a turn of zero is over")
                .isFalse();
        assertThat(lines.turnAt(this, key, "other", Duration.ofHours(1)).withinTurn())
                .as("not the hold the line waits for")
                .isFalse();

        lines.ended(this, key, "t1");
        assertThat(second.mayAsk()).isTrue();
        second.afterBusy(new AcquireResult.Busy(Duration.ofSeconds(1), "elsewhere", 3));
        LocalLines.Ticket third = lines.enter(this, attempt(key), NO_BACKOFF);
        second.granted("t2");
        assertThat(lines.turnAt(this, key, "t2", Duration.ofHours(1)).withinTurn())
                .as("a new streak began with t2")
                .isTrue();
        third.leave();
        assertThat(lines.turnAt(this, key, "t2", Duration.ofHours(1)).withinTurn())
                .as("the turn is the streak's, waiters or not")
                .isTrue();
        lines.holdBack(this, key, "t2", Duration.ZERO);
        assertThat(lines.turnAt(this, key, "t2", Duration.ofHours(1)).withinTurn())
                .as("a yield ends the streak")
                .isFalse();
    }

    @Test
    void afterAYieldTheHeadHoldsBackThenAsks() throws InterruptedException {
        LocalLines lines = new LocalLines(token -> Long.MAX_VALUE);
        LockKey key = new LockKey("ns", "k");
        LocalLines.Ticket first = lines.enter(this, attempt(key), NO_BACKOFF);
        LocalLines.Ticket second = lines.enter(this, attempt(key), NO_BACKOFF);
        first.granted("t1");
        long yielded = System.nanoTime();
        lines.holdBack(this, key, "t1", Duration.ofMillis(200));
        lines.ended(this, key, "t1");
        assertThat(second.mayAsk()).as("holding back for the other client").isFalse();
        second.await(TimeUnit.SECONDS.toNanos(5));
        assertThat(second.mayAsk())
                .as("the hold-back is over when its wait ends")
                .isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - yielded)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    }
}
