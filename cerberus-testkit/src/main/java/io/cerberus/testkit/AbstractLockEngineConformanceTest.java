package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.CerberusMetrics;
import io.cerberus.CerberusMetrics.WaitObserver;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Fence;
import io.cerberus.Leadership;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.LockLostException;
import io.cerberus.LockTimeoutException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

/**
 * The engine contract, in one JVM: every engine module extends this class with a few lines saying
 * how to reach its real server ({@link #engineUri()}) and what it declares ({@link #expectedCapabilities()},
 * exactly), and passes it unchanged. Every capability is checked both ways: declared, it does what
 * it says; not declared, it is refused ({@code CapabilityChecks}). Engine-specific
 * timing is tuned through the hooks ({@link #shortLease()}, {@link #expiryBound()}), never by
 * copying a test. Each test works in a namespace of its own, so one server serves the whole class.
 *
 * <p>Cases of DESIGN section 4 that need other processes (killed or paused holders) are in
 * {@link AbstractMultiProcessConformanceTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractLockEngineConformanceTest {
    private final List<Cerberus> clients = Collections.synchronizedList(new ArrayList<>());
    private final List<Thread> threads = Collections.synchronizedList(new ArrayList<>());
    /** The namespace of the running test. */
    protected String namespace;

    /** @return the URI of the engine under test, reachable for the whole test class */
    protected abstract String engineUri();

    /**
     * Exactly what the engine under test must declare. The cases of a capability run or check
     * its refusal by this set, not by what the engine says, so an engine that stops declaring one
     * fails here and in those cases instead of skipping them.
     *
     * @return the engine's capabilities
     */
    protected abstract Set<Capability> expectedCapabilities();

    /**
     * @return what the engine's provider declares for the URI's scheme: the engine's capabilities,
     *     unless the scheme opens engines that differ (the JDBC modes), then their union
     */
    protected Set<Capability> expectedCapabilitiesOfScheme() {
        return expectedCapabilities();
    }

    /**
     * Tuning hook: a lease short enough to wait out in a test and long enough for the engine to
     * renew reliably (etcd leases are whole seconds, say).
     *
     * @return the short lease used by the expiry and watchdog cases
     */
    protected Duration shortLease() {
        return Duration.ofMillis(600);
    }

    /** @return how long after a lease ends the lock must be free again */
    protected Duration expiryBound() {
        return TestTimes.millis(1000);
    }

    /** @return a URI of this engine where nothing answers, if one can be made */
    protected Optional<String> unreachableUri() {
        return Optional.empty();
    }

    /** @return the most tryAcquire calls per second a blocked waiter may make */
    protected double maxAcquireCallsPerSecondWhileWaiting() {
        return 15;
    }

    /** @return a new client of the engine in this test's namespace, closed after the test */
    protected Cerberus client() {
        return client(Duration.ofSeconds(30));
    }

    /**
     * @param defaultLease the client's default lease
     * @return a new client of the engine in this test's namespace, closed after the test
     */
    protected Cerberus client(Duration defaultLease) {
        return register(Cerberus.builder()
                .engine(engineUri())
                .namespace(namespace)
                .defaultLease(defaultLease)
                .build());
    }

    private Cerberus countingClient() {
        return register(Cerberus.builder()
                .engine("counting:" + engineUri())
                .namespace(namespace)
                .build());
    }

    /** @return a new client over {@code counting:} the engine, with this default lease, closed after the test */
    Cerberus countingClient(Duration defaultLease) {
        return register(Cerberus.builder()
                .engine("counting:" + engineUri())
                .namespace(namespace)
                .defaultLease(defaultLease)
                .build());
    }

    private Cerberus register(Cerberus cerberus) {
        clients.add(cerberus);
        return cerberus;
    }

    private boolean has(Capability capability) {
        return expectedCapabilities().contains(capability);
    }

    Thread thread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
        return thread;
    }

    static void join(Thread thread) throws InterruptedException {
        thread.join(TestTimes.millis(10_000).toMillis());
        assertThat(thread.isAlive()).as("thread %s finished", thread.getName()).isFalse();
    }

    @BeforeEach
    void newNamespace() {
        namespace = "conformance-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void closeClients() {
        threads.forEach(Thread::interrupt);
        for (Cerberus cerberus : List.copyOf(clients)) {
            cerberus.close();
        }
    }

    // ---- capabilities --------------------------------------------------------------------------

    @Test
    void capabilitiesAreExactlyTheExpectedSet() {
        CapabilityChecks.assertDeclaresExactly(
                engineUri(), client(), expectedCapabilities(), expectedCapabilitiesOfScheme());
    }

    @TestFactory
    Stream<DynamicTest> everyCapabilityDoesWhatItSays() {
        CapabilityChecks checks = new CapabilityChecks(this);
        Set<Capability> expected = expectedCapabilities();
        return Arrays.stream(Capability.values())
                .map(capability -> DynamicTest.dynamicTest(
                        capability + " " + CapabilityChecks.shows(capability, expected.contains(capability)),
                        () -> checks.check(capability, expected.contains(capability))));
    }

    // ---- the README --------------------------------------------------------------------------

    @Test
    void theReadmeLockExampleRunsOnThisEngine() throws Exception {
        assumeThat(ReadmeExamples.readme())
                .as("the README's examples run from the Cerberus source tree")
                .isPresent();
        ReadmeExamples.runLockExample(engineUri());
    }

    @Test
    void theReadmeAsyncExampleRunsOnThisEngine() throws Exception {
        assumeThat(ReadmeExamples.readme())
                .as("the README's examples run from the Cerberus source tree")
                .isPresent();
        ReadmeExamples.runAsyncExample(engineUri());
    }

    @Test
    void theReadmeLeadershipExampleRunsOnThisEngine() throws Exception {
        assumeThat(ReadmeExamples.readme())
                .as("the README's examples run from the Cerberus source tree")
                .isPresent();
        ReadmeExamples.runLeadershipExample(engineUri());
    }

    @Test
    void theReadmeScheduledJobExampleRunsOnThisEngine() throws Exception {
        assumeThat(ReadmeExamples.readme())
                .as("the README's examples run from the Cerberus source tree")
                .isPresent();
        ReadmeExamples.runExclusiveExample(engineUri());
    }

    @Test
    void theReadmeSemaphoreExampleRunsOnThisEngine() throws Exception {
        assumeThat(ReadmeExamples.readme())
                .as("the README's examples run from the Cerberus source tree")
                .isPresent();
        ReadmeExamples.runSemaphoreExample(engineUri());
    }

    // ---- mutual exclusion --------------------------------------------------------------------

    @Test
    void mutualExclusionAcrossClientsAndThreads() throws Exception {
        int clientCount = 3;
        int threadsPerClient = 2;
        int iterations = 40;
        AtomicInteger counter = new AtomicInteger();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(clientCount * threadsPerClient);
        try {
            CyclicBarrier start = new CyclicBarrier(clientCount * threadsPerClient);
            List<Future<?>> futures = new ArrayList<>();
            for (int c = 0; c < clientCount; c++) {
                DistributedLock lock = client().lock("counter");
                for (int t = 0; t < threadsPerClient; t++) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < iterations; i++) {
                            lock.lock();
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                int value = counter.get(); // a deliberately non-atomic read-modify-write
                                Thread.yield();
                                counter.set(value + 1);
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                        }
                        return null;
                    }));
                }
            }
            for (Future<?> future : futures) {
                future.get(TestTimes.millis(40_000).toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps.get()).as("holders that overlapped").isZero();
        assertThat(counter.get()).isEqualTo(clientCount * threadsPerClient * iterations);
    }

    @Test
    void otherClientCannotTakeAHeldLock() {
        DistributedLock mine = client().lock("held");
        DistributedLock theirs = client().lock("held");
        mine.lock();
        assertThat(theirs.tryLock()).isFalse();
        mine.unlock();
        assertThat(theirs.tryLock()).isTrue();
        theirs.unlock();
    }

    @Test
    void waiterIsWokenPromptlyByRelease() throws Exception {
        DistributedLock mine = client().lock("handoff");
        DistributedLock theirs = client().lock("handoff");
        mine.lock();
        AtomicReference<Long> acquiredAt = new AtomicReference<>();
        Thread waiter = thread("waiter", () -> {
            try {
                if (theirs.tryLock(10, TimeUnit.SECONDS)) {
                    acquiredAt.set(System.nanoTime());
                    theirs.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        long releasedAt = System.nanoTime();
        mine.unlock();
        join(waiter);
        assertThat(acquiredAt.get()).as("the waiter acquired").isNotNull();
        assertThat(Duration.ofNanos(acquiredAt.get() - releasedAt)).isLessThan(TestTimes.millis(500));
    }

    // ---- late grants ---------------------------------------------------------------------------

    @Test
    void aGrantWhoseAnswerComesAfterItsLeaseIsNeverHandedToTheCaller() throws Exception {
        Cerberus counting = countingClient();
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        Duration lease = TestTimes.millis(500);
        DistributedLock lock = counting.lock("late");

        engine.delayGrants(1, lease.plusMillis(300));
        long releasesBefore = engine.releases();
        assertThatThrownBy(() -> lock.acquire(Duration.ZERO, lease))
                .as("no wait left after the late grant")
                .isInstanceOf(LockTimeoutException.class);
        assertThat(engine.releases() - releasesBefore)
                .as("the late grant given back")
                .isEqualTo(1);

        engine.delayGrants(1, lease.plusMillis(300));
        long tries = engine.tryAcquires();
        try (Lease held = lock.acquire(TestTimes.millis(10_000), lease)) {
            assertThat(held.isValid())
                    .as("the grant handed over is the second, in time")
                    .isTrue();
            assertThat(engine.tryAcquires() - tries)
                    .as("asked again within the wait")
                    .isEqualTo(2);
            assertThat(client().lock("late").tryLock())
                    .as("and it holds the lock")
                    .isFalse();
        }
    }

    // ---- reentrancy and ownership ------------------------------------------------------------

    @Test
    void reentrantHoldsAreCountedWithoutRoundTrips() {
        Cerberus counting = countingClient();
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        DistributedLock lock = counting.lock("reentrant");
        DistributedLock other = client().lock("reentrant");
        lock.lock();
        long before = engine.calls();
        lock.lock();
        assertThat(counting.lock("reentrant").tryLock())
                .as("another view of the same lock re-enters")
                .isTrue();
        assertThat(engine.calls()).as("engine calls for reentry").isEqualTo(before);
        lock.unlock();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(other.tryLock()).isFalse();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    void unlockFromAnotherThreadIsRefused() throws Exception {
        DistributedLock lock = client().lock("owned");
        lock.lock();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        join(thread("intruder", () -> {
            try {
                lock.unlock();
            } catch (Throwable t) {
                thrown.set(t);
            }
        }));
        assertThat(thrown.get())
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("does not hold")
                .hasMessageContaining("'owned'");
        assertThat(client().lock("owned").tryLock())
                .as("still held by its owner")
                .isFalse();
        lock.unlock();
    }

    @Test
    void unlockOfALockNotHeldIsRefused() {
        assertThatThrownBy(() -> client().lock("never").unlock())
                .isInstanceOf(IllegalMonitorStateException.class)
                .isNotInstanceOf(LockLostException.class)
                .hasMessageContaining("does not hold");
    }

    @Test
    void releaseAndRenewByAnotherOwnerAreRefusedByTheEngine() {
        try (LockEngine engine = Engines.open(engineUri(), Duration.ofSeconds(10))) {
            LockKey key = new LockKey(namespace, "owner-checked");
            Acquisition owner = new Acquisition(key, LockMode.EXCLUSIVE, token(), "test owner", Duration.ofSeconds(30));
            Acquisition intruder =
                    new Acquisition(key, LockMode.EXCLUSIVE, token(), "test intruder", Duration.ofSeconds(30));
            AcquireResult first = engine.tryAcquire(owner);
            assertThat(first).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.tryAcquire(owner))
                    .as("a retried acquire is recognised")
                    .isEqualTo(first);
            assertThat(engine.tryAcquire(intruder)).isInstanceOf(AcquireResult.Busy.class);
            engine.abandon(intruder);
            assertThat(engine.release(intruder)).as("release by another owner").isFalse();
            assertThat(engine.renew(intruder)).as("renew by another owner").isFalse();
            assertThat(engine.isLocked(key)).isTrue();
            assertThat(engine.renew(owner)).isTrue();
            assertThat(engine.release(owner)).isTrue();
            assertThat(engine.isLocked(key)).isFalse();
            assertThat(engine.release(owner)).as("a second release").isFalse();
        }
    }

    private static String token() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    @Test
    void leaseMayBeClosedFromAnotherThread() throws Exception {
        Lease lease = client().lock("handle").acquire(Duration.ofSeconds(1));
        assertThat(lease.isValid()).isTrue();
        join(thread("closer", lease::close));
        assertThat(lease.isValid()).isFalse();
        lease.close(); // a second close does nothing
        assertThat(client().lock("handle").tryLock()).isTrue();
    }

    @Test
    void leasesAreSeparateAcquisitionsNotReentrant() throws Exception {
        DistributedLock lock = client().lock("not-reentrant");
        try (Lease first = lock.acquire(Duration.ZERO)) {
            assertThat(first.isValid()).isTrue();
            assertThat(lock.tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(lock.tryLock())
                    .as("the lock() facade does not join a lease")
                    .isFalse();
        }
    }

    @Test
    void acquireThatTimesOutSaysWhichLock() throws Exception {
        DistributedLock mine = client().lock("busy");
        mine.lock();
        DistributedLock theirs = client().lock("busy");
        assertThatThrownBy(() -> theirs.acquire(Duration.ofMillis(100)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("'busy'")
                .hasMessageContaining("100ms");
        assertThat(theirs.tryAcquire(Duration.ofMillis(50))).isEmpty();
        mine.unlock();
    }

    @Test
    void closingTheClientReleasesItsLocks() {
        Cerberus first = client();
        first.lock("closed").lock();
        assertThat(client().lock("closed").tryLock()).isFalse();
        first.close();
        Poll.until("the closed client's lock to be free", expiryBound(), () -> {
            DistributedLock lock = client().lock("closed");
            boolean free = lock.tryLock();
            if (free) {
                lock.unlock();
            }
            return free;
        });
        assertThatThrownBy(() -> first.lock("closed"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    // ---- fencing -----------------------------------------------------------------------------

    @Test
    void fencingTokensStrictlyIncrease() throws Exception {
        assumeThat(has(Capability.FENCING)).as("engine gives fencing tokens").isTrue();
        DistributedLock a = client().lock("fenced");
        DistributedLock b = client().lock("fenced");
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 6; i++) {
            try (Lease lease = (i % 2 == 0 ? a : b).acquire(Duration.ofSeconds(5))) {
                assertThat(lease.fencingToken()).isGreaterThan(previous);
                previous = lease.fencingToken();
            }
        }
    }

    @Test
    void anEngineWithFencingTokensKeepsOneEpochPerNamespaceThatOnlyGoesUp() {
        assumeThat(has(Capability.FENCING)).as("engine gives fencing tokens").isTrue();
        try (LockEngine engine = Engines.open(engineUri(), Duration.ofSeconds(10));
                LockEngine another = Engines.open(engineUri(), Duration.ofSeconds(10))) {
            KeepsEpochs epochs = engine.ability(KeepsEpochs.class)
                    .orElseThrow(() -> new AssertionError("an engine with fencing tokens keeps epochs (KeepsEpochs),"
                            + " so that its fences stay ordered across engine switches"));
            KeepsEpochs seenByAnother = another.ability(KeepsEpochs.class).orElseThrow();
            assertThat(epochs.epoch(namespace)).as("never raised").isZero();
            assertThat(epochs.raiseEpoch(namespace, 3)).isEqualTo(3);
            assertThat(epochs.raiseEpoch(namespace, 3)).as("a repeated raise").isEqualTo(3);
            assertThat(seenByAnother.raiseEpoch(namespace, 2))
                    .as("never lowered")
                    .isEqualTo(3);
            assertThat(seenByAnother.epoch(namespace)).isEqualTo(3);
            assertThat(epochs.epoch(namespace + "-other"))
                    .as("one epoch per namespace")
                    .isZero();
            assertThat(seenByAnother.raiseEpoch(namespace, 1L << 40)).isEqualTo(1L << 40);
            assertThat(epochs.epoch(namespace)).isEqualTo(1L << 40);
        }
    }

    @Test
    void aFailoverToThisEngineAndAFailBackGiveFencesAfterEveryFenceBefore() throws Exception {
        assumeThat(has(Capability.FENCING)).as("engine gives fencing tokens").isTrue();
        Cerberus switching = register(Cerberus.builder()
                .engine("this", engineUri())
                .engine("other", "mem:conformance-" + namespace)
                .namespace(namespace)
                .lockDelay(Duration.ofMillis(1))
                .build());
        Fence first = fenceOfOneHold(switching);
        switching.switchEngine("other");
        Fence onTheOther = fenceOfOneHold(switching);
        switching.switchEngine("this");
        Fence back = fenceOfOneHold(switching);
        Fence ofAClientThatNeverSwitched = fenceOfOneHold(client());

        assertThat(first.isOlderThan(onTheOther))
                .as("%s before %s", first, onTheOther)
                .isTrue();
        assertThat(onTheOther.isOlderThan(back))
                .as("%s before %s", onTheOther, back)
                .isTrue();
        assertThat(back.isOlderThan(ofAClientThatNeverSwitched))
                .as("%s before %s: the raised epoch is the engine's", back, ofAClientThatNeverSwitched)
                .isTrue();
        assertThat(ofAClientThatNeverSwitched.epoch()).isEqualTo(back.epoch());
    }

    private static Fence fenceOfOneHold(Cerberus cerberus) throws InterruptedException {
        try (Lease lease = cerberus.lock("fenced").acquire(Duration.ofSeconds(5))) {
            Fence fence = lease.fence();
            assertThat(fence.token()).isEqualTo(lease.fencingToken());
            return fence;
        }
    }

    // ---- leases, expiry, watchdog --------------------------------------------------------------

    @Test
    void explicitLeaseEndsAndTheHolderSeesTheLoss() throws Exception {
        Duration lease = shortLease();
        DistributedLock mine = client().lock("expiring");
        mine.lock(lease);
        boolean fenced = has(Capability.FENCING);
        long myToken = fenced ? mine.lease().fencingToken() : -1;
        CountDownLatch told = new CountDownLatch(1);
        mine.lease().onLost((l, reason) -> told.countDown());

        DistributedLock theirs = client().lock("expiring");
        long start = System.nanoTime();
        assertThat(theirs.tryLock(lease.plus(expiryBound()).toMillis(), TimeUnit.MILLISECONDS))
                .as("the lock is free after its explicit lease")
                .isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(lease.plus(expiryBound()));
        if (fenced) {
            assertThat(theirs.lease().fencingToken()).isGreaterThan(myToken);
        }

        assertThat(told.await(expiryBound().toMillis(), TimeUnit.MILLISECONDS))
                .as("loss listener called")
                .isTrue();
        assertThat(mine.lease().isValid()).isFalse();
        assertThatThrownBy(mine::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("'expiring'");
        assertThat(mine.isHeldByCurrentThread()).isFalse();
        theirs.unlock();
    }

    @Test
    void watchdogKeepsALockPastSeveralLeases() throws Exception {
        Duration lease = shortLease();
        DistributedLock mine = client(lease).lock("watched");
        mine.lock();
        DistributedLock theirs = client().lock("watched");
        long end = System.nanoTime() + lease.multipliedBy(7).dividedBy(2).toNanos();
        int probes = 0;
        while (System.nanoTime() < end) {
            assertThat(theirs.tryLock(lease.toMillis() / 4, TimeUnit.MILLISECONDS))
                    .as("taken while renewed")
                    .isFalse();
            assertThat(mine.lease().isValid()).isTrue();
            probes++;
        }
        assertThat(probes).isGreaterThan(3);
        mine.unlock();
        assertThat(theirs.tryLock()).isTrue();
        theirs.unlock();
    }

    // ---- waiting: timeouts, interruption, cost -------------------------------------------------

    @Test
    void tryLockHonoursItsTimeout() throws Exception {
        client().lock("timeout").lock();
        DistributedLock theirs = client().lock("timeout");
        long start = System.nanoTime();
        assertThat(theirs.tryLock(400, TimeUnit.MILLISECONDS)).isFalse();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took)
                .isGreaterThanOrEqualTo(Duration.ofMillis(400))
                .isLessThan(Duration.ofMillis(400).plus(TestTimes.millis(700)));
        start = System.nanoTime();
        assertThat(theirs.tryLock()).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(500));
    }

    @Test
    void interruptedWaiterGivesUpItsAttempt() throws Exception {
        DistributedLock mine = client().lock("interrupted");
        mine.lock();
        DistributedLock theirs = client().lock("interrupted");
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = thread("interruptible-waiter", () -> {
            try {
                theirs.lockInterruptibly();
                outcome.set(new AssertionError("acquired a held lock"));
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        waiter.interrupt();
        join(waiter);
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        mine.unlock();
        DistributedLock third = client().lock("interrupted");
        assertThat(third.tryLock(TestTimes.millis(500).toMillis(), TimeUnit.MILLISECONDS))
                .as("the abandoned attempt holds no place")
                .isTrue();
        third.unlock();
    }

    @Test
    void lockWaitsThroughInterruptsAndKeepsTheFlag() throws Exception {
        DistributedLock mine = client().lock("uninterruptible");
        mine.lock();
        DistributedLock theirs = client().lock("uninterruptible");
        AtomicBoolean flagAfterLock = new AtomicBoolean();
        Thread waiter = thread("uninterruptible-waiter", () -> {
            theirs.lock();
            flagAfterLock.set(Thread.currentThread().isInterrupted());
            theirs.unlock();
        });
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        waiter.interrupt();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        assertThat(waiter.isAlive()).as("still waiting after the interrupt").isTrue();
        mine.unlock();
        join(waiter);
        assertThat(flagAfterLock).as("interrupt flag restored").isTrue();
    }

    @Test
    void blockedWaiterSendsNoStorm() throws Exception {
        DistributedLock mine = client().lock("storm");
        mine.lock();
        Cerberus counting = countingClient();
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        Duration wait = Duration.ofSeconds(3);
        assertThat(counting.lock("storm").tryLock(wait.toMillis(), TimeUnit.MILLISECONDS))
                .isFalse();
        long bound = Math.round(maxAcquireCallsPerSecondWhileWaiting() * wait.toSeconds()) + 2;
        assertThat(engine.tryAcquires())
                .as("acquire attempts during a %s wait", wait)
                .isLessThanOrEqualTo(bound);
        mine.unlock();
    }

    // ---- async: no thread held while waiting -----------------------------------------------------

    @Test
    void asyncWaitersHoldNoThreadAndTakeTurnsWithBlockingOnes() throws Exception {
        DistributedLock holder = client().lock("async");
        holder.lock();
        DistributedLock async = client().lock("async");
        DistributedLock blocking = client().lock("async");
        int waiters = 200;
        int threadsBefore = Thread.activeCount();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            all.add(async.acquireAsync(TestTimes.millis(40_000)).thenCompose(lease -> {
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                inside.decrementAndGet();
                done.incrementAndGet();
                return lease.releaseAsync();
            }));
        }
        Thread blocker = thread("blocking-waiter", () -> {
            for (int i = 0; i < 3; i++) {
                blocking.lock();
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                inside.decrementAndGet();
                blocking.unlock();
            }
        });
        assertThat(Thread.activeCount() - threadsBefore)
                .as("threads started for %s async waiters", waiters)
                .isLessThan(40);
        assertThat(done.get()).as("granted while the lock is held").isZero();
        holder.unlock();
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .get(TestTimes.millis(40_000).toMillis(), TimeUnit.MILLISECONDS);
        join(blocker);
        assertThat(overlaps.get()).as("holders that overlapped").isZero();
        assertThat(done.get()).isEqualTo(waiters);
        DistributedLock third = client().lock("async");
        assertThat(third.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .as("free after every async holder released")
                .isTrue();
        third.unlock();
    }

    @Test
    void asyncWaiterIsWokenPromptlyByAReleaseInAnotherClient() throws Exception {
        DistributedLock mine = client().lock("async-handoff");
        mine.lock();
        Cerberus counting = countingClient();
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        CompletableFuture<Long> grantedAt = counting.lock("async-handoff")
                .acquireAsync(TestTimes.millis(20_000))
                .thenApply(lease -> {
                    long at = System.nanoTime();
                    lease.close();
                    return at;
                });
        Poll.until("the async waiter asked", TestTimes.millis(5000), () -> engine.tryAcquires() >= 1);
        assertThat(grantedAt).isNotDone();
        long releasedAt = System.nanoTime();
        mine.unlock();
        long at = grantedAt.get(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(Duration.ofNanos(at - releasedAt)).isLessThan(TestTimes.millis(1000));
    }

    @Test
    void asyncAcquireTimesOutWithTheLockNamed() throws Exception {
        client().lock("async-timeout").lock();
        DistributedLock theirs = client().lock("async-timeout");
        long start = System.nanoTime();
        CompletableFuture<Lease> failed = theirs.acquireAsync(Duration.ofMillis(400));
        assertThatThrownBy(() -> failed.get(TestTimes.millis(5000).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("async-timeout");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isGreaterThanOrEqualTo(Duration.ofMillis(400))
                .isLessThan(Duration.ofMillis(400).plus(TestTimes.millis(1500)));
        assertThat(theirs.tryAcquireAsync(Duration.ZERO).get(5, TimeUnit.SECONDS))
                .isEmpty();
    }

    @Test
    void cancellingAnAsyncWaitWithdrawsTheAttempt() throws Exception {
        DistributedLock mine = client().lock("async-cancel");
        mine.lock();
        Cerberus counting = countingClient();
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        CompletableFuture<Lease> waiting = counting.lock("async-cancel").acquireAsync(TestTimes.millis(30_000));
        Poll.until("the async waiter asked", TestTimes.millis(5000), () -> engine.tryAcquires() >= 1);
        assertThat(waiting.cancel(true)).isTrue();
        mine.unlock();
        DistributedLock third = client().lock("async-cancel");
        assertThat(third.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .as("the cancelled attempt holds no place and no hold")
                .isTrue();
        third.unlock();
        assertThat(waiting).isCancelled();
    }

    @Test
    void aGrantThatRacesACancelIsReleasedNeverLeftHeld() throws Exception {
        Cerberus cerberus = client();
        DistributedLock other = client().lock("async-race");
        for (int i = 0; i < 30; i++) {
            CompletableFuture<Lease> racing = cerberus.lock("async-race").acquireAsync(TestTimes.millis(10_000));
            for (int spin = 0; spin < i * 2_000; spin++) {
                Thread.onSpinWait(); // the cancel lands at different points of the ask
            }
            if (!racing.cancel(true)) {
                racing.get().close(); // granted before the cancel: ours to release
            }
            assertThat(other.tryLock(TestTimes.millis(5000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("round %s: the lock is free after a cancel", i)
                    .isTrue();
            other.unlock();
        }
    }

    // ---- force release ---------------------------------------------------------------------------

    /**
     * @return whether tries without a wait made at the same moment may all be refused though nobody
     *     held the lock (Redlock: each wins some nodes, none a majority); false by default
     */
    protected boolean simultaneousTriesMayAllLose() {
        return false;
    }

    /**
     * @return whether an operator can free another process's hold on this engine
     *     ({@code forceRelease}); false (the default) checks that it is refused with the reason
     */
    protected boolean releasesByForce() {
        return false;
    }

    @Test
    void aForcedReleaseFreesTheHoldItNamesTheHolderLearnsAndANewerHoldIsNeverFreed() throws Exception {
        Cerberus holder = client(TestTimes.millis(1500));
        Cerberus operator = client();
        if (!releasesByForce()) {
            assertThatThrownBy(() -> operator.forceRelease("stuck", 1))
                    .isInstanceOf(io.cerberus.UnsupportedCapabilityException.class);
            return;
        }
        Lease stuck = holder.lock("stuck").acquire(Duration.ofSeconds(5));
        long token = stuck.fencingToken();
        if (has(Capability.INSPECT)) {
            assertThat(operator.inspect("stuck").stream()
                            .filter(info -> info.name().equals("stuck"))
                            .findFirst()
                            .orElseThrow()
                            .fencingToken())
                    .as("the token an operator sees")
                    .isEqualTo(token);
        }
        assertThat(operator.forceRelease("stuck", token + 1))
                .as("a token no hold has frees nothing")
                .isFalse();
        assertThat(stuck.isValid()).isTrue();

        assertThat(operator.forceRelease("stuck", token)).isTrue();
        DistributedLock next = client().lock("stuck");
        assertThat(next.tryLock(TestTimes.millis(5000).toMillis(), TimeUnit.MILLISECONDS))
                .as("free for the next holder at once")
                .isTrue();
        assertThat(next.lease().fencingToken()).isGreaterThan(token);
        Poll.until("the old holder learns it lost the lock", TestTimes.millis(10_000), () -> !stuck.isValid());
        assertThatThrownBy(stuck::close).isInstanceOf(LockLostException.class);

        assertThat(operator.forceRelease("stuck", token))
                .as("the old token again: the newer hold is not freed")
                .isFalse();
        assertThat(client().lock("stuck").tryLock())
                .as("still held by the next holder")
                .isFalse();
        next.unlock();
    }

    // ---- semaphores and multi-locks ------------------------------------------------------------

    /**
     * Tuning hook: whether {@link Semaphores} runs here. A semaphore's permits and a multi-lock's members
     * are this engine's exclusive locks, so a variant that differs from another only in how it reaches
     * the same server (a connection pool in front, Sentinel in front of one Redis) may leave them to it.
     *
     * @return the variant that runs the semaphore and multi-lock cases instead, or empty to run them here
     */
    protected Optional<String> semaphoreCasesRunBy() {
        return Optional.empty();
    }

    /** The cases of {@link SemaphoreAndMultiLockCases}, on this engine. */
    @Nested
    class Semaphores extends SemaphoreAndMultiLockCases {
        @BeforeEach
        void unlessRunByAnotherVariant() {
            assumeThat(semaphoreCasesRunBy())
                    .as(
                            "the semaphore and multi-lock cases run on %s",
                            semaphoreCasesRunBy().orElse(""))
                    .isEmpty();
        }

        @Override
        protected Cerberus client() {
            return AbstractLockEngineConformanceTest.this.client();
        }

        @Override
        protected Cerberus client(Duration defaultLease) {
            return AbstractLockEngineConformanceTest.this.client(defaultLease);
        }

        @Override
        protected Duration shortLease() {
            return AbstractLockEngineConformanceTest.this.shortLease();
        }

        @Override
        protected Duration expiryBound() {
            return AbstractLockEngineConformanceTest.this.expiryBound();
        }

        @Override
        protected boolean fencing() {
            return has(Capability.FENCING);
        }

        @Override
        protected boolean releasesByForce() {
            return AbstractLockEngineConformanceTest.this.releasesByForce();
        }
    }

    // ---- leadership ------------------------------------------------------------------------------

    @Test
    void oneLeaderAtATimeAndAClosingLeaderIsReplacedPromptlyWithAHigherTerm() throws Exception {
        List<Leadership> participants = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            participants.add(client().leadership("leader", "participant-" + i).start());
        }
        long lastTerm = -1;
        while (!participants.isEmpty()) {
            Leadership leader = onlyLeader(participants);
            if (has(Capability.FENCING)) {
                assertThat(leader.term()).as("terms strictly increase").isGreaterThan(lastTerm);
                lastTerm = leader.term();
            }
            if (has(Capability.INSPECT)) {
                assertThat(participants.get(0).currentLeader()).contains(leader.participantId());
            }
            participants.remove(leader);
            long closedAt = System.nanoTime();
            leader.close();
            if (!participants.isEmpty()) {
                onlyLeader(participants);
                assertThat(Duration.ofNanos(System.nanoTime() - closedAt))
                        .as("the next leader, once the old one stepped down")
                        .isLessThan(TestTimes.millis(2000));
            }
        }
    }

    @Test
    void aJobOnOneTickOfFiveInstancesRunsOnceAndTheOthersSkip() throws Exception {
        List<Cerberus> instances = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            instances.add(client());
        }
        AtomicInteger runs = new AtomicInteger();
        CyclicBarrier tick = new CyclicBarrier(instances.size());
        ExecutorService pool = Executors.newFixedThreadPool(instances.size());
        try {
            List<Future<Boolean>> ran = new ArrayList<>();
            for (Cerberus instance : instances) {
                ran.add(pool.submit(() -> {
                    tick.await();
                    return instance.runExclusively("job", Duration.ofSeconds(5), lease -> runs.incrementAndGet());
                }));
            }
            int ranHere = 0;
            for (Future<Boolean> future : ran) {
                ranHere += future.get(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS) ? 1 : 0;
            }
            if (simultaneousTriesMayAllLose()) {
                assertThat(runs.get())
                        .as("runs of one tick (the vote may split)")
                        .isLessThanOrEqualTo(1);
            } else {
                assertThat(runs).as("runs of one tick").hasValue(1);
            }
            assertThat(ranHere).isEqualTo(runs.get());
        } finally {
            pool.shutdownNow();
        }
    }

    private static Leadership onlyLeader(List<Leadership> participants) throws InterruptedException {
        long deadline = System.nanoTime() + TestTimes.millis(10_000).toNanos();
        while (System.nanoTime() < deadline) {
            List<Leadership> leaders =
                    participants.stream().filter(Leadership::isLeader).toList();
            assertThat(leaders).as("leaders at once").hasSizeLessThanOrEqualTo(1);
            if (leaders.size() == 1) {
                return leaders.get(0);
            }
            participants.get(0).awaitLeadership(Duration.ofMillis(20));
        }
        throw new AssertionError("no leader within 10 s among " + participants);
    }

    // ---- bad input -----------------------------------------------------------------------------

    @Test
    void badNamesAreRejectedWithTheRule() {
        Cerberus cerberus = client();
        assertThatThrownBy(() -> cerberus.lock(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock name must not be null");
        assertThatThrownBy(() -> cerberus.lock(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock name must not be empty");
        assertThatThrownBy(() -> cerberus.lock("x".repeat(513)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 512 characters");
        assertThatThrownBy(() -> cerberus.lock("a\nb"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control characters");
        assertThatThrownBy(() -> cerberus.lock("a\u0000b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control characters");
        assertThatThrownBy(() -> cerberus.lock("a\uD800b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("surrogate");
    }

    @Test
    void oddNamesAreJustNames() {
        Cerberus cerberus = client();
        List<String> names = List.of(
                "a/b",
                "a_b",
                "A/B",
                "a%2Fb",
                "../../etc/passwd",
                ".",
                "..",
                "{tag}",
                "*",
                "a b",
                "ключ",
                "錠",
                "😀",
                "x".repeat(512),
                "a.b",
                "a:b",
                "\\");
        List<DistributedLock> held = new ArrayList<>();
        for (String name : names) {
            DistributedLock lock = cerberus.lock(name);
            assertThat(lock.tryLock())
                    .as("lock '%s' is free (no collision with another name)", name)
                    .isTrue();
            held.add(lock);
        }
        Cerberus other = client();
        for (String name : names) {
            assertThat(other.lock(name).tryLock()).as("lock '%s' is held", name).isFalse();
        }
        held.forEach(DistributedLock::unlock);
    }

    @Test
    void badTimesAreRejectedWithTheRule() {
        DistributedLock lock = client().lock("times");
        assertThatThrownBy(() -> lock.tryLock(-1, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wait time must not be negative");
        assertThatThrownBy(() -> lock.lock(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease time must be positive");
        assertThatThrownBy(() -> lock.lock(Duration.ofSeconds(-5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease time must be positive");
        assertThatThrownBy(() -> lock.acquire(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wait time must not be negative");
        assertThatThrownBy(() -> lock.tryLock(1, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease time must be positive");
        assertThatThrownBy(() -> lock.acquire(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wait time must not be null");
        assertThatThrownBy(() -> Cerberus.builder().engine(engineUri()).defaultLease(Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 100ms");
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> client().lock("condition").newCondition())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("condition");
    }

    @Test
    void unreachableEngineFailsWithinTheTimeout() {
        Optional<String> uri = unreachableUri();
        assumeThat(uri).as("engine has an unreachable URI to try").isPresent();
        Duration timeout = Duration.ofSeconds(1);
        long start = System.nanoTime();
        assertThatThrownBy(() -> register(Cerberus.builder()
                        .engine(uri.get())
                        .connectTimeout(timeout)
                        .build()))
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(Redaction.redact(uri.get()));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(timeout.plus(TestTimes.millis(2000)));
    }

    // ---- monitoring --------------------------------------------------------------------------

    @Test
    void isLockedReportsHolds() {
        DistributedLock mine = client().lock("observed");
        DistributedLock observer = client().lock("observed");
        assertThat(observer.isLocked()).isFalse();
        mine.lock();
        assertThat(observer.isLocked()).isTrue();
        mine.unlock();
        assertThat(observer.isLocked()).isFalse();
    }

    @Test
    void inspectListsHolds() throws Exception {
        assumeThat(has(Capability.INSPECT)).as("engine can list its locks").isTrue();
        try (Lease lease = client().lock("inspect-me").acquire(Duration.ZERO)) {
            client().lock("other").lock();
            List<LockInfo> infos = client().inspect("inspect-");
            assertThat(infos).hasSize(1);
            LockInfo info = infos.get(0);
            assertThat(info.name()).isEqualTo("inspect-me");
            assertThat(info.mode()).isEqualTo("exclusive");
            assertThat(info.holder())
                    .contains(Long.toString(ProcessHandle.current().pid()));
            if (has(Capability.FENCING)) {
                assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
            }
        }
        assertThat(client().inspect("inspect-")).isEmpty();
    }

    @Test
    void anObservedWaiterIsToldWhoHoldsTheLockAsTheHolderDescribedItself() throws Exception {
        assumeThat(has(Capability.INSPECT)).as("engine can list its locks").isTrue();
        BlockingQueue<String> toldBusy = new LinkedBlockingQueue<>();
        CerberusMetrics observing = new CerberusMetrics() {
            @Override
            public WaitObserver acquiring(String engine, String mode, String name) {
                return new WaitObserver() {
                    @Override
                    public String holderNote() {
                        return "request=" + Thread.currentThread().getName().replace(' ', '_');
                    }

                    @Override
                    public boolean wantsHolder() {
                        return true;
                    }

                    @Override
                    public void busy(String holder) {
                        toldBusy.add(holder);
                    }
                };
            }
        };
        Cerberus holder = register(Cerberus.builder()
                .engine(engineUri())
                .namespace(namespace)
                .metrics(observing)
                .build());
        Cerberus waiter = register(Cerberus.builder()
                .engine(engineUri())
                .namespace(namespace)
                .metrics(observing)
                .build());
        String note = "request=" + Thread.currentThread().getName().replace(' ', '_');
        try (Lease held = holder.lock("observed").acquire(Duration.ZERO)) {
            assertThat(holder.inspect("observed"))
                    .extracting(LockInfo::holder)
                    .singleElement()
                    .asString()
                    .endsWith(" " + note);

            assertThat(waiter.lock("observed").tryAcquire(Duration.ofMillis(200)))
                    .isEmpty();
            assertThat(held.isValid()).isTrue();
        }
        assertThat(toldBusy.poll(5, TimeUnit.SECONDS))
                .contains(Long.toString(ProcessHandle.current().pid()))
                .endsWith(" " + note);
    }

    // ---- read-write and fair -------------------------------------------------------------------

    @Test
    void readersShareAndWritersExclude() {
        assumeThat(has(Capability.READ_WRITE)).as("engine has read-write locks").isTrue();
        DistributedReadWriteLock a = client().readWriteLock("catalog");
        DistributedReadWriteLock b = client().readWriteLock("catalog");
        DistributedReadWriteLock c = client().readWriteLock("catalog");
        assertThat(a.readLock().tryLock()).isTrue();
        assertThat(b.readLock().tryLock()).as("readers share").isTrue();
        assertThat(c.writeLock().tryLock()).as("a writer waits for readers").isFalse();
        assertThat(client().lock("catalog").tryLock())
                .as("the plain lock of the name is the write lock")
                .isFalse();
        a.readLock().unlock();
        b.readLock().unlock();
        assertThat(c.writeLock().tryLock()).isTrue();
        assertThat(a.readLock().tryLock()).as("readers wait for the writer").isFalse();
        c.writeLock().unlock();
        assertThat(a.readLock().tryLock()).isTrue();
        a.readLock().unlock();
    }

    @Test
    void writerMayTakeTheReadLockButReaderMayNotUpgrade() {
        assumeThat(has(Capability.READ_WRITE)).as("engine has read-write locks").isTrue();
        DistributedReadWriteLock rw = client().readWriteLock("reentrant-rw");
        rw.writeLock().lock();
        assertThat(rw.readLock().tryLock()).as("read inside write").isTrue();
        rw.writeLock().unlock();
        assertThat(client().readWriteLock("reentrant-rw").readLock().tryLock())
                .as("the write stays held while its nested read is")
                .isFalse();
        rw.readLock().unlock();
        assertThat(client().readWriteLock("reentrant-rw").writeLock().tryLock()).isTrue();

        DistributedReadWriteLock reader = client().readWriteLock("upgrade");
        reader.readLock().lock();
        assertThatThrownBy(() -> reader.writeLock().lock())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("upgrade");
        reader.readLock().unlock();
    }

    @Test
    void fairLockServesWaitersInArrivalOrder() throws Exception {
        assumeThat(has(Capability.FAIR)).as("engine has fair locks").isTrue();
        DistributedLock holder = client().fairLock("queue");
        holder.lock();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<Thread> waiters = new ArrayList<>();
        for (String label : List.of("first", "second", "third")) {
            waiters.add(queuedFairWaiter("queue", label, order));
        }
        holder.unlock();
        for (Thread waiter : waiters) {
            join(waiter);
        }
        assertThat(order).containsExactly("first", "second", "third");
    }

    /**
     * Starts a thread that waits for a fair lock on a client of its own and adds its label to
     * {@code order} once it holds it. Returns once the engine has answered the thread's first
     * attempt busy, so the attempt stands in the engine's queue: a thread merely parked may still
     * be on its way to the engine, and arrive after a later one.
     *
     * @param name the fair lock's name, held by another client
     * @param label what the thread adds to {@code order}
     * @param order the labels, in the order their threads got the lock
     * @return the waiting thread
     */
    Thread queuedFairWaiter(String name, String label, List<String> order) {
        DistributedLock lock = countingClient(Duration.ofSeconds(30)).fairLock(name);
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        Thread waiter = thread("fair-" + label, () -> {
            try {
                if (lock.tryLock(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS)) {
                    order.add(label);
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.until("the engine to queue " + waiter.getName(), TestTimes.millis(5000), () -> engine.busyAnswers() > 0);
        return waiter;
    }
}
