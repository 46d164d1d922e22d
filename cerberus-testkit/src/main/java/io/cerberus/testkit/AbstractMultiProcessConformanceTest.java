package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * <p>What is asserted depends on how the engine frees a dead holder's lock. A lease engine frees it
 * when the lease runs out; the paused holder then finds its lease invalid and its unlock refused,
 * while the next holder's fencing token is larger. A session-bound engine frees a dead holder's
 * lock at once, and a paused holder (whose process and session live on) keeps it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class AbstractMultiProcessConformanceTest {
    private final List<ManagedProcess> children = new ArrayList<>();
    private Cerberus client;
    private String namespace;

    /** @return the URI of the engine under test, reachable from child JVMs too */
    protected abstract String engineUri();

    /** @return the lease of the child holders (tuning hook, as in the in-JVM suite) */
    protected Duration shortLease() {
        return Duration.ofMillis(800);
    }

    /** @return how long after a lease ends (or, session-bound, after a death) the lock must be free */
    protected Duration expiryBound() {
        return TestTimes.millis(1500);
    }

    @BeforeEach
    void connect() {
        namespace = "multi-" + UUID.randomUUID().toString().substring(0, 8);
        client = Cerberus.builder().engine(engineUri()).namespace(namespace).build();
        assertThat(client.capabilities()).as("an engine in this suite is shared by processes").contains(Capability.MULTI_PROCESS);
    }

    @AfterEach
    void cleanUp() {
        children.forEach(ManagedProcess::close);
        client.close();
    }

    private boolean sessionBound() {
        return client.capabilities().contains(Capability.SESSION_BOUND);
    }

    /**
     * Tuning hook: whether a holder that is paused (SIGSTOP) keeps its lock for as long as it is
     * paused. True by default for session-bound engines (the operating system keeps a stopped
     * process's file locks); false for an engine whose session itself expires when the holder stops
     * answering (ZooKeeper), which then frees the lock like a lease within {@link #expiryBound()}.
     *
     * @return whether a paused holder keeps its lock
     */
    protected boolean pausedHolderKeepsTheLock() {
        return sessionBound();
    }

    private ManagedProcess clientProcess() {
        ManagedProcess child = ClientProcess.start(engineUri(), namespace, shortLease());
        children.add(child);
        return child;
    }

    @Test
    void mutualExclusionAcrossProcesses(@TempDir Path dir) throws IOException {
        Path counter = dir.resolve("counter");
        int iterations = 150;
        List<ManagedProcess> workers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ManagedProcess worker = ManagedProcess.startJavaWithEngine(CounterWorker.class, engineUri(), namespace, "counter",
                    counter.toString(), Integer.toString(iterations));
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
            assertThat(file.readLong()).as("increments under the lock, none lost").isEqualTo(2L * iterations);
        }
    }

    @Test
    void killedHolderIsReleased() throws Exception {
        ManagedProcess child = clientProcess();
        long childFence = ClientProcess.lock(child, "exclusive", "crash");
        DistributedLock lock = client.lock("crash");
        assertThat(lock.tryLock()).isFalse();

        child.kill(TestTimes.millis(10_000));
        long killedAt = System.nanoTime();
        Duration bound = sessionBound() ? expiryBound() : shortLease().plus(expiryBound());
        assertThat(lock.tryLock(bound.toMillis(), TimeUnit.MILLISECONDS)).as("free within %s of the kill", bound).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(bound);
        if (client.capabilities().contains(Capability.FENCING)) {
            assertThat(lock.lease().fencingToken()).isGreaterThan(childFence);
        }
        lock.unlock();
    }

    @Test
    void pausedHolderPastItsLease() throws Exception {
        ManagedProcess child = clientProcess();
        long childFence = ClientProcess.lock(child, "exclusive", "pause");
        DistributedLock lock = client.lock("pause");
        child.signal("STOP");
        try {
            Duration wait = shortLease().plus(expiryBound());
            boolean taken = lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
            if (pausedHolderKeepsTheLock()) {
                assertThat(taken).as("a paused holder of a session-bound lock keeps it").isFalse();
            } else {
                assertThat(taken).as("the lease of a paused holder runs out").isTrue();
                if (client.capabilities().contains(Capability.FENCING)) {
                    assertThat(lock.lease().fencingToken()).isGreaterThan(childFence);
                }
            }
        } finally {
            child.signal("CONT");
        }
        String valid = child.ask("VALID exclusive pause", TestTimes.millis(10_000));
        String unlock = child.ask("UNLOCK exclusive pause", TestTimes.millis(10_000));
        if (pausedHolderKeepsTheLock()) {
            assertThat(unlock).isEqualTo("UNLOCKED");
            assertThat(valid).isEqualTo("VALID true");
            assertThat(lock.tryLock(expiryBound().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } else {
            if (!sessionBound()) {
                // a lease is judged on the holder's own clock; an expired session is learnt from the server, a moment later
                assertThat(valid).as("the woken holder knows its lease is gone").isEqualTo("VALID false");
            }
            assertThat(unlock).startsWith("LOST ").contains("'pause'").contains("was lost");
            assertThat(lock.isHeldByCurrentThread()).as("the next holder still holds").isTrue();
        }
        lock.unlock();
    }

    @Test
    void readersShareAcrossProcesses() throws Exception {
        assumeThat(client.capabilities()).as("engine has read-write locks").contains(Capability.READ_WRITE);
        ManagedProcess child = clientProcess();
        ClientProcess.lock(child, "read", "shared");
        assertThat(client.readWriteLock("shared").readLock().tryLock()).as("readers share").isTrue();
        try (Cerberus other = Cerberus.builder().engine(engineUri()).namespace(namespace).build()) {
            assertThat(other.readWriteLock("shared").writeLock().tryLock()).as("a writer waits for readers").isFalse();
        }
        client.readWriteLock("shared").readLock().unlock();
        assertThat(child.ask("UNLOCK read shared", TestTimes.millis(10_000))).isEqualTo("UNLOCKED");
        DistributedLock writer = client.readWriteLock("shared").writeLock();
        assertThat(writer.tryLock(expiryBound().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        writer.unlock();
    }
}
