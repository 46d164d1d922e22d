package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
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
 * <p><b>Layout.</b> Each lock (namespace, name) is one file in DIR, named by {@link FileNames}
 * (no traversal, no collisions, bounded length). Byte 0 of the file is the lock: an exclusive
 * region lock for exclusive and write holds, a shared one for reads. Byte 1 is the counter mutex.
 * The contents hold the fencing counter, the record of the exclusive holder for {@code inspect},
 * and the lock's identity ({@link FileLockFile}). Files are never deleted: deleting one would
 * reset its counter and race with processes that hold or are opening the old file, so DIR keeps
 * one small file (3 KB) per distinct lock name ever used.
 *
 * <p><b>Invariants.</b>
 * <ul>
 * <li>One JVM opens a lock file once: POSIX locks belong to the process, and closing any
 *     descriptor of the file drops all of them, so every engine in the JVM shares one channel per
 *     file through the static {@link FileRegistry}, closed only when nothing in the JVM holds or
 *     waits for that lock. The channel is asynchronous, hence not interruptible: interrupting a
 *     thread that does I/O on an ordinary {@code FileChannel} would close it and drop the locks.
 * <li>Within the JVM the {@link FileEntry} arbitrates (one exclusive holder token, or a set of
 *     reader tokens) because the OS sees one process; the OS lock is held exactly while the JVM
 *     has a holder: taken by the first, released by the last.
 * <li>Fencing tokens come from the counter in the file, read and incremented under the counter
 *     mutex by every acquisition of any mode, so they strictly increase across processes. The
 *     mutex is taken before the lock region, so whoever holds the mutex sees a completed record.
 * <li>A dead process's locks, mutex included, are freed by the OS at once (even on SIGKILL):
 *     the engine is {@link Capability#SESSION_BOUND}; leases are not stored and never expire.
 * </ul>
 *
 * <p><b>Costs.</b> An uncontended acquisition is a mutex lock, a lock, an 8-byte read and one
 * small write, unlock of the mutex; a release is a one-byte write and two unlocks. Reads and writes
 * are handed to the channel's I/O thread, so a lock and unlock take some tens of microseconds. No
 * fsync: fencing tokens survive process crashes; a new or recreated file starts its counter at the
 * current time in microseconds, so they also keep increasing when a file is lost (see
 * {@link FileLockFile}). Waiting for a holder in this JVM is woken by its release; waiting for
 * another process cannot be woken (the OS tells nothing), so waiters retry with a capped, jittered
 * backoff (2 ms doubling to 100 ms): at most about ten attempts a second per waiter, and up to
 * ~0.1 s of latency after a release by another process. The OS locks are not fair, so neither is
 * this engine. {@code isLocked} and {@code inspect} probe with a lock taken and dropped under the
 * counter mutex, so they never make another process's attempt fail.
 *
 * <p><b>Limits.</b> Two copies of this class in one JVM (two class loaders) do not share the
 * registry: they exclude each other, but a copy closing its channel drops the other's locks. The
 * same happens when other code in the JVM opens and closes a lock file, or when one directory is
 * reached through two real paths (a bind mount). A lock file deleted while in use (by hand, or a cleaner of
 * {@code /tmp}) splits its lock in two: keep long-lived lock directories out of cleaned places.
 * Network file systems may not support the locks.
 */
final class FileEngine implements LockEngine, Inspects, KeepsIdempotencyRecords {
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
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory,
                path -> path.getFileName().toString().startsWith(filePrefix))) {
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
                if (key.isEmpty() || !key.get().namespace().equals(namespace) || !key.get().name().startsWith(prefix)
                        || !FileNames.fileName(key.get()).equals(path.getFileName().toString())) {
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
        return new EngineUnavailableException("file: engine " + uri + ": " + what + " (" + file + "): " + cause
                + "; check that the directory is on a local file system that supports file locks and that this"
                + " user may read and write its files", cause);
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
