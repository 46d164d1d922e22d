package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Leadership;
import io.cerberus.servers.ManagedProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine contract across processes: holders in child JVMs that are killed with SIGKILL or
 * paused with SIGSTOP past their lease. Extended by every engine that can be shared by processes
 * (all but {@code mem:}).
 *
 * <p>One bound for every engine: a holder that falls silent (killed or paused) keeps its lock for
 * its {@link io.cerberus.Lease#silentHolderExpiry()}, which is the lease, or no more than the lease
 * plus the server's rounding ({@link #serverRounding()}: a minimum session or TTL, an expiry
 * tick); the lock is then free within that and a second. Where the silent expiry is empty (a
 * SQL session lock, a file lock), a killed holder's lock is free within a second and a paused
 * holder keeps it. A woken holder whose lock was taken finds its lease invalid and its unlock
 * refused, and the next holder's fencing token is larger. A leader in a child JVM is replaced in
 * the same bound, with a larger term, and a paused one learns on waking that it no longer leads.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class AbstractMultiProcessConformanceTest {
    private final List<ManagedProcess> children = new ArrayList<>();
    private Cerberus client;
    private String namespace;

    /** @return the URI of the engine under test, reachable from child JVMs too */
    protected abstract String engineUri();

    /**
     * The expected capabilities, as in {@link AbstractLockEngineConformanceTest#expectedCapabilities()}: the cases
     * here go by this set, not by what the engine says.
     *
     * @return exactly what the engine under test declares
     */
    protected abstract Set<Capability> expectedCapabilities();

    /** @return what the engine's provider declares for the URI's scheme (the union over the JDBC modes) */
    protected Set<Capability> expectedCapabilitiesOfScheme() {
        return expectedCapabilities();
    }

    private boolean has(Capability capability) {
        return expectedCapabilities().contains(capability);
    }

    /** @return the lease of the child holders (tuning hook, as in the in-JVM suite) */
    protected Duration shortLease() {
        return Duration.ofMillis(800);
    }

    /**
     * Tuning hook: how much longer than the lease the server may keep a silent holder's lock — the
     * amount by which it raises a short session or TTL to its minimum, plus the tick on which it
     * checks expiries. Zero by default: the lease is kept to the millisecond.
     *
     * @return the server's rounding of a silent holder's expiry
     */
    protected Duration serverRounding() {
        return Duration.ZERO;
    }

    /** What every engine may take on top of the silent expiry: the waiter's wake-up and a loaded machine. */
    private static Duration slack() {
        return TestTimes.millis(1000);
    }

    /** @return the longest a silent holder may keep its lock: the lease, the server's rounding, and the slack */
    private Duration silentBound() {
        return shortLease().plus(serverRounding()).plus(slack());
    }

    @BeforeEach
    void connect() {
        namespace = "multi-" + UUID.randomUUID().toString().substring(0, 8);
        client = Cerberus.builder().engine(engineUri()).namespace(namespace).build();
        assertThat(expectedCapabilities())
                .as("an engine in this suite is shared by processes")
                .contains(Capability.MULTI_PROCESS);
    }

    @AfterEach
    void cleanUp() {
        children.forEach(ManagedProcess::close);
        client.close();
    }

    /**
     * Checks what a child says a silent holder keeps its lock for: nothing beyond its connection
     * where the engine binds holds to it, else at least the lease (never less: the holder counts on
     * it) and at most the lease plus the server's rounding.
     */
    private Optional<Duration> checkedSilentExpiry(ManagedProcess child, String mode, String name) {
        Optional<Duration> silent = ClientProcess.silentHolderExpiry(child, mode, name);
        if (has(Capability.SESSION_BOUND) && silent.isEmpty()) {
            return silent; // a SQL session lock or a file lock: it lasts as long as the holder's connection or process
        }
        assertThat(silent)
                .as("how long the engine keeps a silent holder's lock")
                .isPresent();
        assertThat(silent.get())
                .as("a silent holder keeps its lock for its lease, or its lease plus the server's rounding")
                .isGreaterThanOrEqualTo(shortLease())
                .isLessThanOrEqualTo(shortLease().plus(serverRounding()));
        return silent;
    }

    /** @return what the engine keeps a silent holder's lock for when it was taken with the children's lease */
    private Optional<Duration> silentExpiryOfALease() throws InterruptedException {
        try (io.cerberus.Lease probe = client.lock("silent-probe").acquire(TestTimes.millis(5000), shortLease())) {
            return probe.silentHolderExpiry();
        }
    }

    private ManagedProcess clientProcess() {
        return clientProcess(shortLease());
    }

    private ManagedProcess clientProcess(Duration lease) {
        ManagedProcess child = ClientProcess.start(engineUri(), namespace, lease);
        children.add(child);
        return child;
    }

    @Test
    void capabilitiesAreExactlyTheExpectedSet() {
        CapabilityChecks.assertDeclaresExactly(
                engineUri(), client, expectedCapabilities(), expectedCapabilitiesOfScheme());
    }

    @Test
    void mutualExclusionAcrossProcesses(@TempDir Path dir) throws IOException {
        Path counter = dir.resolve("counter");
        int iterations = 150;
        List<ManagedProcess> workers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ManagedProcess worker = ManagedProcess.startJavaWithEngine(
                    CounterWorker.class,
                    engineUri(),
                    namespace,
                    "counter",
                    counter.toString(),
                    Integer.toString(iterations));
            children.add(worker);
            workers.add(worker);
        }
        for (ManagedProcess worker : workers) {
            worker.awaitLine("READY", TestTimes.millis(20_000));
        }
        workers.forEach(worker -> worker.send("GO"));
        for (ManagedProcess worker : workers) {
            worker.awaitLine("DONE", TestTimes.millis(60_000));
        }
        try (RandomAccessFile file = new RandomAccessFile(counter.toFile(), "r")) {
            assertThat(file.readLong())
                    .as("increments under the lock, none lost")
                    .isEqualTo(2L * iterations);
        }
    }

    @Test
    void killedHolderIsReleasedWithinItsSilentExpiry() throws Exception {
        ManagedProcess child = clientProcess();
        long childFence = ClientProcess.lock(child, "exclusive", "crash");
        Optional<Duration> silent = checkedSilentExpiry(child, "exclusive", "crash");
        DistributedLock lock = client.lock("crash");
        assertThat(lock.tryLock()).isFalse();

        child.kill(TestTimes.millis(10_000));
        long killedAt = System.nanoTime();
        Duration bound = silent.isPresent() ? silentBound() : slack();
        assertThat(lock.tryLock(bound.toMillis(), TimeUnit.MILLISECONDS))
                .as("free within %s of the kill", bound)
                .isTrue();
        Duration freedAfter = Duration.ofNanos(System.nanoTime() - killedAt);
        assertThat(freedAfter).isLessThan(bound);
        silent.ifPresent(expiry -> assertThat(freedAfter)
                .as("not freed long before the silent expiry its holder was told")
                .isGreaterThanOrEqualTo(expiry.dividedBy(2)));
        if (has(Capability.FENCING)) {
            assertThat(lock.lease().fencingToken()).isGreaterThan(childFence);
        }
        lock.unlock();
    }

    @Test
    void neverMoreThanItsPermitsAcrossProcesses(@TempDir Path dir) throws IOException {
        Path counter = dir.resolve("permits");
        int permits = 2;
        List<ManagedProcess> workers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ManagedProcess worker = ManagedProcess.startJavaWithEngine(
                    PermitsWorker.class,
                    engineUri(),
                    namespace,
                    "pool",
                    Integer.toString(permits),
                    counter.toString(),
                    "2",
                    "15");
            children.add(worker);
            workers.add(worker);
        }
        for (ManagedProcess worker : workers) {
            worker.awaitLine("READY", TestTimes.millis(20_000));
        }
        workers.forEach(worker -> worker.send("GO"));
        for (ManagedProcess worker : workers) {
            worker.awaitLine("DONE", TestTimes.millis(60_000));
        }
        assertThat(PermitsWorker.most(counter))
                .as("most holders at once, over 2 processes of 2 threads")
                .isBetween(1L, (long) permits);
    }

    @Test
    void aKilledHoldersPermitsComeBackWithinItsSilentExpiry() throws Exception {
        ManagedProcess child = clientProcess();
        ClientProcess.lock(child, "exclusive", "permits-probe");
        Optional<Duration> silent = checkedSilentExpiry(child, "exclusive", "permits-probe");
        ClientProcess.permits(child, "crash-pool", 2, 2);
        io.cerberus.DistributedSemaphore semaphore = client.semaphore("crash-pool", 2);
        assertThat(semaphore.tryAcquire(1, Duration.ZERO))
                .as("both held by the child")
                .isEmpty();

        child.kill(TestTimes.millis(10_000));
        long killedAt = System.nanoTime();
        Duration bound = silent.isPresent() ? silentBound() : slack();
        Optional<io.cerberus.Permits> back = semaphore.tryAcquire(2, bound);
        Duration freedAfter = Duration.ofNanos(System.nanoTime() - killedAt);
        assertThat(back).as("both permits back within %s of the kill", bound).isPresent();
        assertThat(freedAfter).isLessThan(bound);
        back.get().close();
    }

    @Test
    void pausedHolderLosesItsLockAfterItsSilentExpiry() throws Exception {
        ManagedProcess child = clientProcess();
        long childFence = ClientProcess.lock(child, "exclusive", "pause");
        Optional<Duration> silent = checkedSilentExpiry(child, "exclusive", "pause");
        boolean keeps = silent.isEmpty();
        DistributedLock lock = client.lock("pause");
        child.signal("STOP");
        try {
            long pausedAt = System.nanoTime();
            boolean taken = lock.tryLock(silentBound().toMillis(), TimeUnit.MILLISECONDS);
            if (keeps) {
                assertThat(taken)
                        .as("a paused holder of a lock bound to its connection keeps it")
                        .isFalse();
            } else {
                assertThat(taken)
                        .as("the silent expiry of a paused holder runs out")
                        .isTrue();
                Duration freedAfter = Duration.ofNanos(System.nanoTime() - pausedAt);
                assertThat(freedAfter)
                        .isLessThan(silentBound())
                        .as("not freed long before the silent expiry its holder was told")
                        .isGreaterThanOrEqualTo(silent.get().dividedBy(2));
                if (has(Capability.FENCING)) {
                    assertThat(lock.lease().fencingToken()).isGreaterThan(childFence);
                }
            }
        } finally {
            child.signal("CONT");
        }
        String valid = child.ask("VALID exclusive pause", TestTimes.millis(10_000));
        String unlock = child.ask("UNLOCK exclusive pause", TestTimes.millis(10_000));
        if (keeps) {
            assertThat(unlock).isEqualTo("UNLOCKED");
            assertThat(valid).isEqualTo("VALID true");
            assertThat(lock.tryLock(slack().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } else {
            if (!has(Capability.SESSION_BOUND)) {
                // a lease is judged on the holder's own clock; an expired session is learnt from the server, a moment
                // later
                assertThat(valid).as("the woken holder knows its lease is gone").isEqualTo("VALID false");
            }
            assertThat(unlock).startsWith("LOST ").contains("'pause'").contains("was lost");
            assertThat(lock.isHeldByCurrentThread())
                    .as("the next holder still holds")
                    .isTrue();
        }
        lock.unlock();
    }

    @Test
    void aKilledLeaderIsReplacedWithinItsSilentExpiryWithAHigherTerm() throws Exception {
        ManagedProcess child = clientProcess();
        long childTerm = ClientProcess.lead(child, "leader");
        Optional<Duration> silent = silentExpiryOfALease();
        try (Leadership here = client.leadership("leader", "parent").start()) {
            assertThat(here.isLeader()).as("one leader at a time").isFalse();
            child.kill(TestTimes.millis(10_000));
            long killedAt = System.nanoTime();
            Duration bound = silent.isPresent() ? silentBound() : slack();
            assertThat(here.awaitLeadership(bound))
                    .as("elected within %s of the kill", bound)
                    .isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(bound);
            if (has(Capability.FENCING)) {
                assertThat(here.term()).as("terms strictly increase").isGreaterThan(childTerm);
            }
        }
    }

    @Test
    void aPausedLeaderIsReplacedWithinItsSilentExpiryAndLearnsItWasDeposed() throws Exception {
        ManagedProcess child = clientProcess();
        long childTerm = ClientProcess.lead(child, "paused-leader");
        Optional<Duration> silent = silentExpiryOfALease();
        try (Leadership here = client.leadership("paused-leader", "parent").start()) {
            child.signal("STOP");
            boolean elected;
            try {
                elected = here.awaitLeadership(silentBound());
            } finally {
                child.signal("CONT");
            }
            if (silent.isEmpty()) {
                assertThat(elected)
                        .as("a paused leader whose hold is bound to its connection keeps leading")
                        .isFalse();
                return;
            }
            assertThat(elected)
                    .as("elected within %s of the pause", silentBound())
                    .isTrue();
            if (has(Capability.FENCING)) {
                assertThat(here.term()).as("terms strictly increase").isGreaterThan(childTerm);
            }
            Poll.until(
                    "the woken leader learns it was deposed",
                    TestTimes.millis(10_000),
                    () -> child.ask("LEADING - paused-leader", TestTimes.millis(10_000))
                            .equals("LEADING false"));
            assertThat(here.isLeader()).as("the new leader still leads").isTrue();
        }
    }

    @Test
    void readersShareAcrossProcesses() throws Exception {
        assumeThat(has(Capability.READ_WRITE)).as("engine has read-write locks").isTrue();
        // a lease long enough that no stall of a busy machine ends the child's hold: this case is about sharing, not
        // expiry
        ManagedProcess child = clientProcess(Duration.ofSeconds(30));
        ClientProcess.lock(child, "read", "shared");
        assertThat(client.readWriteLock("shared").readLock().tryLock())
                .as("readers share")
                .isTrue();
        try (Cerberus other =
                Cerberus.builder().engine(engineUri()).namespace(namespace).build()) {
            assertThat(other.readWriteLock("shared").writeLock().tryLock())
                    .as("a writer waits for readers")
                    .isFalse();
        }
        client.readWriteLock("shared").readLock().unlock();
        assertThat(child.ask("UNLOCK read shared", TestTimes.millis(10_000))).isEqualTo("UNLOCKED");
        DistributedLock writer = client.readWriteLock("shared").writeLock();
        assertThat(writer.tryLock(slack().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        writer.unlock();
    }
}
