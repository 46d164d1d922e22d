package io.cerberus.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FileEngineTest {
    @TempDir
    Path root;

    private static LockEngine open(String uri) {
        return new FileEngineProvider().open(new EngineContext(uri, Duration.ofSeconds(5), (token, reason) -> {}));
    }

    private static Acquisition attempt(String name, LockMode mode) {
        return new Acquisition(
                new LockKey("default", name),
                mode,
                UUID.randomUUID().toString().replace("-", ""),
                "test holder",
                Duration.ofSeconds(30));
    }

    @Test
    void uriFormsNameTheDirectory() throws IOException {
        Path absolute = root.resolve("abs");
        try (Cerberus cerberus = Cerberus.connect("file:" + absolute)) {
            assertThat(cerberus.currentEngineUri()).isEqualTo("file:" + absolute.toRealPath());
            assertThat(cerberus.capabilities())
                    .containsExactlyInAnyOrder(
                            Capability.FENCING,
                            Capability.READ_WRITE,
                            Capability.SESSION_BOUND,
                            Capability.MULTI_PROCESS,
                            Capability.INSPECT);
        }
        try (Cerberus cerberus = Cerberus.connect("file://" + root.resolve("three-slashes"))) {
            assertThat(cerberus.currentEngineUri())
                    .isEqualTo("file:" + root.resolve("three-slashes").toRealPath());
        }
        Path relative = Path.of("").toAbsolutePath().relativize(root.resolve("rel"));
        try (Cerberus cerberus = Cerberus.connect("file:" + relative)) {
            assertThat(cerberus.currentEngineUri())
                    .isEqualTo("file:" + root.resolve("rel").toRealPath());
        }
        try (Cerberus cerberus = Cerberus.connect("file:")) {
            assertThat(cerberus.currentEngineUri())
                    .isEqualTo("file:" + FileEngineProvider.defaultDirectory().toRealPath());
        }
    }

    @Test
    void unusableDirectoryIsUnavailableNamingTheUri() throws IOException {
        assertThatThrownBy(() -> Cerberus.connect("file:/proc/cerberus-test"))
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("file:/proc/cerberus-test")
                .hasMessageContaining("check");
        Path plainFile = Files.createFile(root.resolve("not-a-directory"));
        assertThatThrownBy(() -> Cerberus.connect("file:" + plainFile))
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("file:" + plainFile);
    }

    @Test
    void malformedUrisAreRefusedWithTheRule() {
        assertThatThrownBy(() -> Cerberus.connect("file:/x?a=b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not have a query")
                .hasMessageContaining("file:/x?a=****");
        assertThatThrownBy(() -> Cerberus.connect("file:/x#frag"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fragment");
        assertThatThrownBy(() -> Cerberus.connect("file://otherhost/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("on this machine")
                .hasMessageContaining("file:///otherhost/x");
        assertThatThrownBy(() -> Cerberus.connect("file:/a\u0000b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void readersShareAndFencesIncreaseForEveryMode() throws Exception {
        try (Cerberus a = Cerberus.connect("file:" + root);
                Cerberus b = Cerberus.connect("file:" + root)) {
            Lease firstRead = a.readWriteLock("rw").readLock().acquire(Duration.ZERO);
            Lease secondRead = b.readWriteLock("rw").readLock().acquire(Duration.ZERO);
            assertThat(secondRead.fencingToken()).isGreaterThan(firstRead.fencingToken());
            assertThat(b.lock("rw").tryAcquire(Duration.ZERO))
                    .as("exclusive while read")
                    .isEmpty();
            firstRead.close();
            assertThat(b.lock("rw").isLocked()).isTrue();
            secondRead.close();
            assertThat(b.lock("rw").isLocked()).isFalse();
            try (Lease write = b.readWriteLock("rw").writeLock().acquire(Duration.ZERO)) {
                assertThat(write.fencingToken()).isGreaterThan(secondRead.fencingToken());
                assertThat(a.readWriteLock("rw").readLock().tryAcquire(Duration.ofMillis(20)))
                        .as("read while written")
                        .isEmpty();
            }
        }
    }

    @Test
    void fencesKeepIncreasingWhenALockFileIsLost() throws Exception {
        long before = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        try (Cerberus cerberus = Cerberus.connect("file:" + root)) {
            long first;
            try (Lease lease = cerberus.lock("lost").acquire(Duration.ZERO)) {
                first = lease.fencingToken();
            }
            assertThat(first)
                    .as("a new file starts at the clock, in microseconds")
                    .isGreaterThanOrEqualTo(before);
            Files.delete(root.resolve("default.lost.lock")); // a reboot or cleaner emptying the directory
            try (Lease lease = cerberus.lock("lost").acquire(Duration.ZERO)) {
                assertThat(lease.fencingToken()).isGreaterThan(first);
            }
        }
    }

    @Test
    void retriedAcquireIsGrantedTheSameFenceAndAbandonReleases() {
        try (LockEngine engine = open("file:" + root)) {
            Acquisition mine = attempt("retry", LockMode.EXCLUSIVE);
            AcquireResult first = engine.tryAcquire(mine);
            assertThat(first).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.tryAcquire(mine)).isEqualTo(first);
            assertThat(engine.renew(mine)).isTrue();
            Acquisition other = attempt("retry", LockMode.READ);
            assertThat(engine.tryAcquire(other)).isInstanceOf(AcquireResult.Busy.class);
            engine.abandon(other);
            engine.abandon(mine);
            assertThat(engine.isLocked(mine.key())).isFalse();
            assertThat(engine.renew(mine)).isFalse();
            assertThat(engine.release(mine)).isFalse();
        }
    }

    @Test
    void aWaiterOnAnotherClientOfThisJvmIsWokenByTheRelease() throws Exception {
        try (LockEngine engine = open("file:" + root)) {
            Acquisition holder = attempt("wake", LockMode.EXCLUSIVE);
            Acquisition waiter = attempt("wake", LockMode.EXCLUSIVE);
            assertThat(engine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
            AcquireResult busy = engine.tryAcquire(waiter);
            assertThat(busy).isInstanceOf(AcquireResult.Busy.class);
            Thread releaser = new Thread(() -> engine.release(holder));
            long start = System.nanoTime();
            releaser.start();
            engine.awaitChange(waiter, Duration.ofSeconds(5)); // returns at the release, or at once if it came first
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis((long)
                    (2000 * Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1")))));
            releaser.join();
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.release(waiter)).isTrue();
        }
    }

    @Test
    void aClosedEngineGivesUpItsOwnHoldsOnly() {
        try (LockEngine kept = open("file:" + root)) {
            Acquisition keptHold = attempt("kept", LockMode.EXCLUSIVE);
            assertThat(kept.tryAcquire(keptHold)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition closedHold = attempt("closed", LockMode.EXCLUSIVE);
            try (LockEngine closed = open("file:" + root)) {
                assertThat(closed.tryAcquire(closedHold)).isInstanceOf(AcquireResult.Granted.class);
                assertThat(closed.tryAcquire(attempt("kept", LockMode.EXCLUSIVE)))
                        .isInstanceOf(AcquireResult.Busy.class);
            }
            assertThat(kept.isLocked(closedHold.key())).isFalse();
            assertThat(kept.isLocked(keptHold.key())).isTrue();
            assertThat(kept.release(keptHold)).isTrue();
        }
    }

    @Test
    void filesAreClosedWhenNothingInTheJvmUsesThem() {
        int before = FileRegistry.openFiles();
        try (Cerberus a = Cerberus.connect("file:" + root);
                Cerberus b = Cerberus.connect("file:" + root.resolve("."))) {
            DistributedLock lock = a.lock("closing");
            lock.lock();
            assertThat(b.lock("closing").tryLock()).isFalse();
            assertThat(FileRegistry.openFiles())
                    .as("one file, shared by both clients")
                    .isEqualTo(before + 1);
            lock.unlock();
            assertThat(FileRegistry.openFiles()).isEqualTo(before);
            assertThat(b.lock("never-locked").isLocked()).isFalse();
            assertThat(FileRegistry.openFiles()).isEqualTo(before);
        }
        assertThat(root.resolve("default.never-locked.lock"))
                .as("isLocked creates no file")
                .doesNotExist();
    }

    @Test
    void inspectListsHoldsOfThisJvm() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                        .engine("file:" + root)
                        .namespace("ops")
                        .build();
                Cerberus other = Cerberus.builder()
                        .engine("file:" + root)
                        .namespace("other")
                        .build()) {
            String longName = "report/" + "x".repeat(300);
            try (Lease exclusive = cerberus.lock(longName).acquire(Duration.ZERO);
                    Lease read = cerberus.readWriteLock("catalog").readLock().acquire(Duration.ZERO);
                    Lease elsewhere = other.lock("catalog").acquire(Duration.ZERO)) {
                List<LockInfo> infos = cerberus.inspect("");
                assertThat(infos)
                        .containsExactly(
                                new LockInfo(
                                        "catalog",
                                        "read",
                                        infos.get(0).holder(),
                                        read.fencingToken(),
                                        Optional.empty(),
                                        -1),
                                new LockInfo(
                                        longName,
                                        "exclusive",
                                        infos.get(1).holder(),
                                        exclusive.fencingToken(),
                                        Optional.empty(),
                                        -1));
                assertThat(infos)
                        .allSatisfy(info -> assertThat(info.holder())
                                .contains(Long.toString(ProcessHandle.current().pid())));
                assertThat(cerberus.inspect("rep")).extracting(LockInfo::name).containsExactly(longName);
                assertThat(elsewhere.fencingToken()).isPositive();
            }
            assertThat(cerberus.inspect("")).isEmpty();
        }
    }
}
