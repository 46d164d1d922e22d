package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedSemaphore;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.LockTimeoutException;
import io.cerberus.MultiLease;
import io.cerberus.MultiLock;
import io.cerberus.Permit;
import io.cerberus.Permits;
import io.cerberus.UnsupportedCapabilityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The contract of semaphores and multi-locks, in one JVM: the conformance suite runs these cases on
 * every engine ({@link AbstractLockEngineConformanceTest.Semaphores}); the cases with killed holders
 * are in {@link AbstractMultiProcessConformanceTest}. A test gets its clients, all in one fresh
 * namespace, from the hooks.
 */
public abstract class SemaphoreAndMultiLockCases {

    /** @return a new client of the engine under test, in the test's namespace, closed after the test */
    protected abstract Cerberus client();

    /**
     * @param defaultLease the client's default lease
     * @return a new client as {@link #client()}, with that default lease
     */
    protected abstract Cerberus client(Duration defaultLease);

    /** @return a lease short enough to wait out and long enough to renew reliably */
    protected abstract Duration shortLease();

    /** @return how long after a lease ends the hold must be free again */
    protected abstract Duration expiryBound();

    /** @return whether the engine gives fencing tokens */
    protected abstract boolean fencing();

    /** @return whether the engine frees another process's hold by its token */
    protected abstract boolean releasesByForce();

    private static final Duration WAIT = TestTimes.millis(20_000);

    // ---- semaphores ----------------------------------------------------------------------------

    @Test
    void neverMoreThanItsPermitsAcrossClientsAndEveryWaiterGetsItsTurns() throws Exception {
        int permits = 2;
        int clientCount = 3;
        int threadsPerClient = 2;
        int iterations = 8;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(clientCount * threadsPerClient);
        try {
            CyclicBarrier start = new CyclicBarrier(clientCount * threadsPerClient);
            List<Future<?>> workers = new ArrayList<>();
            for (int c = 0; c < clientCount; c++) {
                DistributedSemaphore semaphore = client().semaphore("pool", permits);
                for (int t = 0; t < threadsPerClient; t++) {
                    workers.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < iterations; i++) {
                            try (Permits permit = semaphore.acquire(1, WAIT)) {
                                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                                Thread.sleep(3);
                                inside.decrementAndGet();
                                assertThat(permit.isValid()).isTrue();
                            }
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS); // every waiter got all its turns: none starved
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(most.get()).as("most holders at once").isBetween(1, permits);
    }

    @Test
    @SuppressWarnings("try") // the last permit is given back inside its block, to be taken again
    void aHandleHoldsDistinctSlotsBelowTheCountEachFencedOnItsOwn() throws Exception {
        DistributedSemaphore semaphore = client().semaphore("slots", 3);
        assertThat(semaphore.permits()).isEqualTo(3);
        assertThat(semaphore.availablePermits()).isEqualTo(3);
        try (Permits two = semaphore.acquire(2, WAIT)) {
            assertThat(two.count()).isEqualTo(2);
            assertThat(two.semaphoreName()).isEqualTo("slots");
            Set<Integer> slots = new HashSet<>();
            for (Permit permit : two.permits()) {
                assertThat(permit.slot()).isBetween(0, 2);
                assertThat(permit.fenceName()).isEqualTo("slots#" + permit.slot());
                slots.add(permit.slot());
            }
            assertThat(slots).hasSize(2);
            assertThat(semaphore.availablePermits()).isEqualTo(1);
            DistributedSemaphore other = client().semaphore("slots", 3);
            try (Permits last = other.acquire(1, WAIT)) {
                assertThat(slots).doesNotContain(last.permits().get(0).slot());
                assertThat(other.tryAcquire(1, Duration.ZERO))
                        .as("all three held")
                        .isEmpty();
                if (fencing()) {
                    long before = last.permits().get(0).fencingToken();
                    int slot = last.permits().get(0).slot();
                    last.close();
                    try (Permits again = other.acquire(1, WAIT)) {
                        assertThat(again.permits().get(0).slot()).isEqualTo(slot);
                        assertThat(again.permits().get(0).fencingToken())
                                .as("a slot's tokens increase")
                                .isGreaterThan(before);
                    }
                }
            }
        }
        assertThat(semaphore.availablePermits()).isEqualTo(3);
        assertThat(client().lock("slots").tryLock())
                .as("a semaphore and a lock of the same name never meet")
                .isTrue();
    }

    @Test
    void aTimedOutAcquireHoldsNothingAndSaysWhy() throws Exception {
        DistributedSemaphore semaphore = client().semaphore("full", 2);
        try (Permits one = semaphore.acquire(1, WAIT)) {
            assertThat(one.count()).isEqualTo(1);
            Duration wait = TestTimes.millis(300);
            long start = System.nanoTime();
            assertThatThrownBy(() -> client().semaphore("full", 2).acquire(2, wait))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("semaphore 'full'")
                    .hasMessageContaining("2 free permits of 2");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(wait.plus(TestTimes.millis(5_000)));
            assertThat(semaphore.availablePermits())
                    .as("all or nothing: the free permit it found was given back")
                    .isEqualTo(1);
        }
    }

    @Test
    void twoCallersEachAskingForMostOfThePermitsDoNotDeadlock() throws Exception {
        int permits = 3;
        AtomicInteger held = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CyclicBarrier start = new CyclicBarrier(2);
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                DistributedSemaphore semaphore = client().semaphore("most", permits);
                workers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 5; i++) {
                        try (Permits two = semaphore.acquire(2, WAIT)) {
                            most.accumulateAndGet(held.addAndGet(two.count()), Math::max);
                            Thread.sleep(2);
                            held.addAndGet(-two.count());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(most.get()).as("permits held at once").isLessThanOrEqualTo(permits);
    }

    @Test
    void permitsWithAnExplicitLeaseComeBackAfterItAndTheHolderSeesTheLoss() throws Exception {
        Duration lease = shortLease();
        Permits mine = client().semaphore("expiring", 1).acquire(1, WAIT, lease);
        CountDownLatch told = new CountDownLatch(1);
        AtomicReference<LockLostException> reason = new AtomicReference<>();
        mine.onLost(lost -> {
            reason.set(lost);
            told.countDown();
        });
        long start = System.nanoTime();
        Optional<Permits> theirs = client().semaphore("expiring", 1)
                .tryAcquire(1, lease.plus(expiryBound()).plus(expiryBound()));
        assertThat(theirs).as("the permit is back after its lease").isPresent();
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(lease.plus(expiryBound()).plus(expiryBound()));
        assertThat(told.await(expiryBound().toMillis() + 5_000, TimeUnit.MILLISECONDS))
                .as("the holder is told")
                .isTrue();
        assertThat(reason.get().getMessage()).contains("permit 0 of semaphore 'expiring'");
        assertThat(mine.isValid()).isFalse();
        assertThatThrownBy(mine::close).isInstanceOf(LockLostException.class);
        theirs.get().close();
    }

    @Test
    void renewedPermitsAreKeptPastTheirLease() throws Exception {
        Duration lease = shortLease();
        try (Permits mine = client(lease).semaphore("renewed", 1).acquire(1, WAIT)) {
            Thread.sleep(lease.multipliedBy(2).toMillis()); // the time that passes is what is tested
            assertThat(mine.isValid()).isTrue();
            assertThat(client().semaphore("renewed", 1).tryAcquire(1, Duration.ZERO))
                    .as("still held")
                    .isEmpty();
        }
    }

    @Test
    void anAsyncAcquireWaitsWithoutAThreadAndACancelledOneLeavesNothingHeld() throws Exception {
        DistributedSemaphore semaphore = client().semaphore("async", 1);
        Permits first = semaphore.acquire(1, WAIT);
        DistributedSemaphore other = client().semaphore("async", 1);
        CompletableFuture<Permits> waiting = other.acquireAsync(1, WAIT);
        CompletableFuture<Permits> cancelled = other.acquireAsync(1, WAIT);
        cancelled.cancel(false);
        assertThat(waiting).isNotDone();
        first.close();
        Permits second = waiting.get(30, TimeUnit.SECONDS);
        assertThat(second.isValid()).isTrue();
        second.releaseAsync().get(30, TimeUnit.SECONDS);
        assertThat(client().semaphore("async", 1).tryAcquire(1, WAIT))
                .as("the cancelled acquire holds nothing")
                .isPresent();
        assertThat(other.tryAcquireAsync(1, Duration.ZERO).get(30, TimeUnit.SECONDS))
                .isEmpty();
    }

    @Test
    void permitsAreGivenBackByIdFromAnotherClientAndTheHolderLearns() throws Exception {
        Permits mine = client(TestTimes.millis(1500)).semaphore("by-id", 2).acquire(2, WAIT);
        DistributedSemaphore operator = client().semaphore("by-id", 2);
        if (!fencing() || !releasesByForce()) {
            assertThatThrownBy(() -> operator.release("0:1,1:1")).isInstanceOf(UnsupportedCapabilityException.class);
            mine.close();
            return;
        }
        String id = mine.id();
        assertThat(operator.release(id)).isTrue();
        assertThat(operator.tryAcquire(2, WAIT)).as("both back at once").isPresent();
        Poll.until("the holder learns it lost its permits", TestTimes.millis(10_000), () -> !mine.isValid());
        assertThatThrownBy(mine::close).isInstanceOf(LockLostException.class);
        assertThat(operator.release(id)).as("the old id frees no newer hold").isFalse();
        assertThatThrownBy(() -> operator.release("nonsense")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void badCountsAreRefusedNamingTheRule() {
        Cerberus cerberus = client();
        assertThatThrownBy(() -> cerberus.semaphore("bad", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits must be 1 to");
        assertThatThrownBy(() -> cerberus.semaphore("", 1)).isInstanceOf(IllegalArgumentException.class);
        DistributedSemaphore semaphore = cerberus.semaphore("bad", 2);
        assertThatThrownBy(() -> semaphore.acquire(3, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permit count must be 1 to the semaphore's 2 permits, was 3");
        assertThatThrownBy(() -> semaphore.acquire(1, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---- multi-locks ---------------------------------------------------------------------------

    @Test
    void multiLocksInOppositeOrdersNeverDeadlockAndNeverOverlap() throws Exception {
        AtomicInteger insideA = new AtomicInteger();
        AtomicInteger insideB = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CyclicBarrier start = new CyclicBarrier(2);
            List<Future<?>> workers = new ArrayList<>();
            List<MultiLock> both = List.of(client().multiLock("a", "b"), client().multiLock("b", "a"));
            for (MultiLock multiLock : both) {
                workers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 10; i++) {
                        try (MultiLease hold = multiLock.acquire(WAIT)) {
                            if (insideA.incrementAndGet() != 1 | insideB.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            Thread.onSpinWait();
                            insideA.decrementAndGet();
                            insideB.decrementAndGet();
                            assertThat(hold.isValid()).isTrue();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps.get()).isZero();
    }

    @Test
    void aMultiLockExcludesItsMembersAndTakesNothingWhenOneIsBusy() throws Exception {
        Cerberus cerberus = client();
        MultiLock multiLock = cerberus.multiLock("x", "y", "x");
        assertThat(multiLock.names()).containsExactly("x", "y");
        DistributedLock y = client().lock("y");
        assertThat(y.tryLock()).isTrue();
        assertThatThrownBy(() -> multiLock.acquire(TestTimes.millis(200)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("none is held");
        assertThat(client().lock("x").tryLock()).as("x was given back").isTrue();
        y.unlock();
        try (MultiLease hold = cerberus.multiLock("y", "z").acquire(WAIT)) {
            assertThat(hold.leases()).extracting(Lease::lockName).containsExactly("y", "z");
            assertThat(client().lock("z").tryLock()).isFalse();
            if (fencing()) {
                assertThat(hold.lease("z").fencingToken()).isPositive();
            }
            assertThatThrownBy(() -> hold.lease("w")).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(client().lock("z").tryLock()).isTrue();
        assertThatThrownBy(() -> cerberus.multiLock()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cerberus.multiLock("ok", "")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void losingOneMemberLosesTheWholeHoldAndSaysWhich() throws Exception {
        Duration lease = shortLease();
        Cerberus cerberus = client();
        MultiLease hold = cerberus.multiLock("m1", "m2").acquire(WAIT, lease);
        CountDownLatch told = new CountDownLatch(1);
        AtomicReference<String> which = new AtomicReference<>();
        hold.onLost((member, reason) -> {
            which.set(member.lockName());
            told.countDown();
        });
        assertThat(told.await(lease.plus(expiryBound()).toMillis() + 5_000, TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(which.get()).isIn("m1", "m2");
        assertThat(hold.isValid()).isFalse();
        assertThatThrownBy(hold::close).isInstanceOf(LockLostException.class);
        try (MultiLease again = client().multiLock("m1", "m2").acquire(WAIT)) {
            assertThat(again.isValid()).isTrue();
        }
    }

    @Test
    void anAsyncMultiLockWaitsForEveryMemberAndACancelGivesBackWhatItTook() throws Exception {
        DistributedLock b = client().lock("async-b");
        assertThat(b.tryLock()).isTrue();
        MultiLock multiLock = client().multiLock("async-a", "async-b");
        DistributedLock a = client().lock("async-a");
        CompletableFuture<MultiLease> cancelled = multiLock.acquireAsync(WAIT);
        Poll.until("a is taken by the async acquire", TestTimes.millis(10_000), a::isLocked);
        cancelled.cancel(false);
        Poll.until("a is given back after the cancel", TestTimes.millis(10_000), () -> !a.isLocked());
        CompletableFuture<MultiLease> waiting =
                client().multiLock("async-a", "async-b").acquireAsync(WAIT);
        b.unlock();
        try (MultiLease hold = waiting.get(30, TimeUnit.SECONDS)) {
            assertThat(hold.leases()).hasSize(2);
        }
    }
}
