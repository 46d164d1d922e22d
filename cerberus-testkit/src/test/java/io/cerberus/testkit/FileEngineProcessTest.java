package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.servers.ManagedProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file: engine across JVMs, beyond the conformance suite: each test runs one child JVM
 * ({@link ClientProcess}) against the same directory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FileEngineProcessTest {
    private static final String NAMESPACE = "multi";

    @TempDir
    Path dir;

    private String uri;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeEach
    void directory() {
        uri = "file:" + dir.resolve("locks");
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : closeAfter) {
            closeable.close();
        }
    }

    private Cerberus client() {
        Cerberus cerberus = Cerberus.builder().engine(uri).namespace(NAMESPACE).build();
        closeAfter.add(cerberus);
        return cerberus;
    }

    private ManagedProcess child() {
        ManagedProcess child = ClientProcess.start(uri, NAMESPACE, Duration.ofSeconds(30));
        closeAfter.add(child);
        return child;
    }

    private static String ask(ManagedProcess child, String command) {
        return child.ask(command, TestTimes.millis(10_000));
    }

    @Test
    void closingAnotherClientOfTheJvmKeepsTheLockOfTheFirst() throws Exception {
        ManagedProcess child = child();
        Cerberus a = client();
        DistributedLock mine = a.lock("x");
        mine.lock();
        Cerberus b = Cerberus.builder().engine(uri).namespace(NAMESPACE).build();
        assertThat(b.lock("x").tryLock()).isFalse();
        assertThat(b.lock("x").isLocked()).isTrue();
        b.close();
        assertThat(ask(child, "TRY exclusive x"))
                .as("the child while A holds, after B closed")
                .isEqualTo("BUSY");
        mine.unlock();
        assertThat(ask(child, "TRY exclusive x"))
                .as("the child after A unlocked")
                .startsWith("ACQUIRED ");
        assertThat(a.lock("x").isLocked()).isTrue();
    }

    @Test
    void interruptedThreadsDoNotDropTheLocksOfTheJvm() throws Exception {
        ManagedProcess child = child();
        DistributedReadWriteLock rw = client().readWriteLock("x");
        rw.readLock().lock();
        DistributedLock read = client().readWriteLock("x").readLock();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread interrupted = new Thread(() -> {
            try {
                Thread.currentThread().interrupt();
                assertThat(read.tryLock()).isTrue(); // joins the shared hold: file I/O while interrupted
                read.unlock();
                assertThat(Thread.currentThread().isInterrupted())
                        .as("interrupt status kept")
                        .isTrue();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        interrupted.start();
        interrupted.join(TestTimes.millis(10_000).toMillis());
        assertThat(failure.get()).isNull();
        assertThat(ask(child, "TRY write x"))
                .as("a writer in the child while this JVM still reads")
                .isEqualTo("BUSY");
        rw.readLock().unlock();
        assertThat(ask(child, "TRY write x")).startsWith("ACQUIRED ");
    }

    @Test
    void killedHolderIsReleasedAtOnce() throws Exception {
        ManagedProcess child = child();
        long childFence = ClientProcess.lock(child, "exclusive", "crash");
        DistributedLock lock = client().lock("crash");
        assertThat(lock.tryLock()).isFalse();
        child.kill(TestTimes.millis(10_000));
        long killedAt = System.nanoTime();
        Duration bound = TestTimes.millis(2000);
        assertThat(lock.tryLock(bound.toMillis(), TimeUnit.MILLISECONDS))
                .as("free within %s of the kill", bound)
                .isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(bound);
        assertThat(lock.lease().fencingToken()).isGreaterThan(childFence);
        lock.unlock();
    }

    @Test
    void fencingTokensStrictlyIncreaseAcrossProcesses() throws Exception {
        ManagedProcess child = child();
        Cerberus cerberus = client();
        long previous = 0;
        for (int round = 0; round < 3; round++) {
            String mode = round == 1 ? "read" : "exclusive";
            long childFence = ClientProcess.lock(child, mode, "fenced");
            assertThat(childFence).isGreaterThan(previous);
            assertThat(ask(child, "UNLOCK " + mode + " fenced")).isEqualTo("UNLOCKED");
            DistributedLock lock = round == 2 ? cerberus.readWriteLock("fenced").readLock() : cerberus.lock("fenced");
            try (Lease lease = lock.acquire(TestTimes.millis(5000))) {
                assertThat(lease.fencingToken()).isGreaterThan(childFence);
                previous = lease.fencingToken();
            }
        }
    }

    @Test
    void readersShareAcrossProcessesAndWritersAreExcluded() throws Exception {
        ManagedProcess child = child();
        ClientProcess.lock(child, "read", "shared");
        DistributedReadWriteLock rw = client().readWriteLock("shared");
        assertThat(rw.readLock().tryLock()).as("readers share across processes").isTrue();
        assertThat(client().readWriteLock("shared").writeLock().tryLock())
                .as("a writer while both read")
                .isFalse();
        rw.readLock().unlock();
        assertThat(client().readWriteLock("shared").writeLock().tryLock())
                .as("a writer while the child reads")
                .isFalse();
        assertThat(ask(child, "UNLOCK read shared")).isEqualTo("UNLOCKED");

        DistributedLock writer = rw.writeLock();
        assertThat(writer.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(ask(child, "TRY read shared"))
                .as("a reader while this JVM writes")
                .isEqualTo("BUSY");
        writer.unlock();
        assertThat(ask(child, "TRY read shared")).startsWith("ACQUIRED ");
    }

    @Test
    void inspectShowsHoldsOfAnotherProcessUntilItDies() throws Exception {
        ManagedProcess child = child();
        String longName = "batch-" + "n".repeat(300);
        long exclusiveFence = ClientProcess.lock(child, "exclusive", "inspected");
        long writeFence = ClientProcess.lock(child, "write", longName);
        ClientProcess.lock(child, "read", "shelf");
        Cerberus cerberus = client();
        List<LockInfo> infos = cerberus.inspect("");
        String pid = Long.toString(child.pid());
        assertThat(infos).hasSize(3);
        assertThat(infos.get(0))
                .isEqualTo(new LockInfo(longName, "write", infos.get(0).holder(), writeFence, Optional.empty(), -1));
        assertThat(infos.get(0).holder()).contains(pid);
        assertThat(infos.get(1))
                .isEqualTo(new LockInfo(
                        "inspected", "exclusive", infos.get(1).holder(), exclusiveFence, Optional.empty(), -1));
        assertThat(infos.get(1).holder()).contains(pid);
        assertThat(infos.get(2))
                .isEqualTo(new LockInfo("shelf", "read", "readers in other processes", -1, Optional.empty(), -1));
        assertThat(cerberus.inspect("insp")).extracting(LockInfo::name).containsExactly("inspected");
        assertThat(client().lock("inspected").tryLock())
                .as("the probes left the lock held")
                .isFalse();

        child.kill(TestTimes.millis(10_000));
        assertThat(cerberus.inspect(""))
                .as("holds of a dead process, whose records stay in the files")
                .isEmpty();
    }
}
