package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.NotifiesChanges;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code file:DIR} engine: locks shared by the processes of one machine through
 * operating-system file locks (POSIX {@code fcntl} record locks on Linux).
 *
 * <p><b>Layout.</b> One file per lock (namespace, name) in DIR, named by {@link FileNames} (no
 * traversal, no collisions, bounded length). Byte 0 is the lock (an exclusive region for exclusive
 * and write holds, a shared one for reads), byte 1 the counter mutex; the contents hold the fencing
 * counter, the exclusive holder's record and the lock's identity ({@link FileLockFile}). Files are
 * never deleted: that would reset the counter and race with processes opening the old file.
 *
 * <p><b>Invariants.</b> One JVM opens a lock file once ({@link FileRegistry}): POSIX locks belong
 * to the process and closing any descriptor drops them all; the channel is asynchronous, so an
 * interrupt cannot close it. In the JVM the {@link FileEntry} arbitrates; the OS lock is held
 * exactly while the JVM has a holder. Every acquisition reads and increments the fencing counter
 * under the mutex (taken before the lock region), so tokens increase across processes. The OS frees
 * a dead process's locks at once: the engine is {@link Capability#SESSION_BOUND}, leases never expire.
 *
 * <p><b>Costs.</b> Uncontended: mutex, lock, an 8-byte read and a small write, some tens of
 * microseconds; no fsync. A release in another process cannot be signalled, so its waiters back off
 * (2 ms doubling to 100 ms, jittered). Not fair, as the OS locks are not.
 *
 * <p><b>Limits.</b> A second copy of this class (class loader), other code opening a lock file, or a
 * directory under two real paths can drop this JVM's locks; a lock file deleted in use splits its
 * lock (keep lock directories out of cleaned {@code /tmp}); network file systems may lack the locks.
 */
final class FileEngine implements LockEngine, Inspects, KeepsIdempotencyRecords, NotifiesChanges, KeepsEpochs {
    private static final System.Logger LOG = System.getLogger(FileEngine.class.getName());

    private final String uri;
    private final Path directory;
    /** This engine's attempts not yet released or abandoned, by token: given up on close. */
    private final Map<String, Acquisition> attempts = new ConcurrentHashMap<>();

    private volatile boolean closed;
    private volatile FileIdempotencyStore idempotency;

    /**
     * @param directory the real path of the lock directory, which exists and is writable
     */
    FileEngine(Path directory) {
        this.directory = directory;
        this.uri = "file:" + directory;
    }

    @Override
    public String describe() {
        return uri;
    }

    @Override
    public Set<Capability> capabilities() {
        return FileEngineProvider.CAPABILITIES;
    }

    Path pathOf(LockKey key) {
        return directory.resolve(FileNames.fileName(key));
    }

    @Override
    public long epoch(String namespace) {
        ensureOpen();
        return FileEpochs.of(directory, namespace).raise(0);
    }

    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        ensureOpen();
        return FileEpochs.of(directory, namespace).raise(atLeast);
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        ensureOpen();
        attempts.put(attempt.token(), attempt);
        AcquireResult result;
        try {
            FileEntry entry = FileRegistry.retain(pathOf(attempt.key()), attempt.key());
            try {
                result = entry.tryAcquire(attempt);
            } finally {
                FileRegistry.release(entry);
            }
        } catch (IOException e) {
            throw unavailable("could not acquire lock '" + attempt.key().name() + "'", attempt.key(), e);
        }
        if (closed) {
            abandon(attempt);
            ensureOpen();
        }
        return result;
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        FileEntry entry = FileRegistry.retainOpen(pathOf(attempt.key()));
        if (entry == null) {
            return;
        }
        try {
            entry.awaitChange(attempt, max);
        } finally {
            FileRegistry.release(entry);
        }
    }

    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        FileEntry entry = FileRegistry.retainOpen(pathOf(attempt.key()));
        if (entry == null) {
            wake.run();
            return () -> {};
        }
        try {
            return entry.onChange(attempt, wake);
        } finally {
            FileRegistry.release(entry);
        }
    }

    @Override
    public void abandon(Acquisition attempt) {
        attempts.remove(attempt.token());
        FileEntry entry = FileRegistry.retainOpen(pathOf(attempt.key()));
        if (entry == null) {
            return;
        }
        try {
            entry.abandon(attempt);
        } finally {
            FileRegistry.release(entry);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        FileEntry entry = FileRegistry.retainOpen(pathOf(attempt.key()));
        if (entry == null) {
            return false;
        }
        try {
            return entry.renew(attempt);
        } finally {
            FileRegistry.release(entry);
        }
    }

    @Override
    public boolean release(Acquisition attempt) {
        attempts.remove(attempt.token());
        FileEntry entry = FileRegistry.retainOpen(pathOf(attempt.key()));
        if (entry == null) {
            return false;
        }
        try {
            return entry.release(attempt);
        } finally {
            FileRegistry.release(entry);
        }
    }

    @Override
    public boolean isLocked(LockKey key) {
        ensureOpen();
        try {
            FileEntry entry = FileRegistry.retain(pathOf(key), null);
            try {
                return entry.isLocked();
            } finally {
                FileRegistry.release(entry);
            }
        } catch (NoSuchFileException e) {
            return false; // never locked: no file
        } catch (IOException e) {
            throw unavailable("could not tell whether lock '" + key.name() + "' is held", key, e);
        }
    }

    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        ensureOpen();
        String filePrefix = FileNames.namespacePrefix(namespace);
        List<LockInfo> infos = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(
                directory, path -> path.getFileName().toString().startsWith(filePrefix))) {
            for (Path path : files) {
                String fileName = path.getFileName().toString();
                Optional<String> name = FileNames.lockName(fileName, filePrefix);
                if (name.isPresent() ? name.get().startsWith(prefix) : FileNames.isHashed(fileName, filePrefix)) {
                    inspectFile(path, namespace, name, prefix, infos);
                }
            }
        } catch (IOException e) {
            throw unavailable("could not list the locks of namespace '" + namespace + "'", null, e);
        }
        return infos;
    }

    private void inspectFile(Path path, String namespace, Optional<String> name, String prefix, List<LockInfo> infos)
            throws IOException {
        FileEntry entry;
        try {
            entry = FileRegistry.retain(path, null);
        } catch (NoSuchFileException e) {
            return;
        }
        try {
            String lockName;
            if (name.isPresent()) {
                lockName = name.get();
            } else {
                // a hashed file name: the name is in the file; it must map back to this very file
                Optional<LockKey> key = identity(entry);
                if (key.isEmpty()
                        || !key.get().namespace().equals(namespace)
                        || !key.get().name().startsWith(prefix)
                        || !FileNames.fileName(key.get())
                                .equals(path.getFileName().toString())) {
                    return;
                }
                lockName = key.get().name();
            }
            infos.addAll(entry.inspect(lockName));
        } finally {
            FileRegistry.release(entry);
        }
    }

    private static Optional<LockKey> identity(FileEntry entry) throws IOException {
        entry.lock.lock();
        try {
            return entry.file().readIdentity();
        } finally {
            entry.lock.unlock();
        }
    }

    /** Records live in {@code DIR/idempotency/}, one file per key ({@link FileIdempotencyStore}). */
    @Override
    public IdempotencyStore idempotencyStore() {
        ensureOpen();
        FileIdempotencyStore store = idempotency;
        if (store == null) {
            synchronized (this) {
                if (idempotency == null) {
                    idempotency = new FileIdempotencyStore(directory, uri);
                }
                store = idempotency;
            }
        }
        return store;
    }

    private EngineUnavailableException unavailable(String what, LockKey key, IOException cause) {
        String file = key == null ? "directory " + directory : "lock file " + pathOf(key);
        return new EngineUnavailableException(
                "file: engine " + uri + ": " + what + " (" + file + "): " + cause
                        + "; check that the directory is on a local file system that supports file locks and that this"
                        + " user may read and write its files",
                cause);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the file: engine " + uri + " is closed");
        }
    }

    /** Gives up every attempt of this engine still known (the core releases its holds first). */
    @Override
    public void close() {
        closed = true;
        int left = 0;
        for (Acquisition attempt : List.copyOf(attempts.values())) {
            left++;
            abandon(attempt);
        }
        if (left > 0) {
            LOG.log(Level.DEBUG, "closed " + uri + ", giving up " + left + " attempt(s) not released first");
        }
    }
}
