package io.cerberus.local;

import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.support.Backoff;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.FileLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock file in this JVM: the in-JVM holders and waiters of the lock and the one operating-system
 * lock they share. See {@link FileEngine} for the design.
 *
 * <p>All state is guarded by {@link #lock}; {@link #users} by the {@link FileRegistry} lock. The
 * operating-system lock region is held exactly while there is an in-JVM holder: exclusively for
 * an exclusive or write holder, shared for readers (taken by the first reader, released by the
 * last).
 */
final class FileEntry {
    private static final System.Logger LOG = System.getLogger(FileEntry.class.getName());
    /** Waiting for an in-JVM holder: its release signals, so this only bounds a lost signal. */
    static final Duration IN_JVM_RETRY = Duration.ofSeconds(1);

    static final Duration MIN_BACKOFF = Duration.ofMillis(2);
    /** Pauses fall between half of this and this: about 100 ms on average once a wait is long. */
    static final Duration MAX_BACKOFF = Duration.ofMillis(130);
    /** Waiters not seen for this long are forgotten, so a vanished waiter does not keep the file open. */
    static final long STALE_WAITER_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long an acquisition tries for the counter mutex before it answers busy. */
    private static final long ACQUIRE_MUTEX_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long a release or a probe tries for the counter mutex before going on without it. */
    private static final long SHORT_MUTEX_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    static final String OTHER_READERS = "readers in other processes";
    static final String UNKNOWN_HOLDER = "a holder in another process";

    final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final FileLockFile file;
    /** Calls now using this entry; guarded by the registry lock. */
    int users;

    private long version;
    private FileLock osLock;
    private Hold writer;
    private final Map<String, Hold> readers = new LinkedHashMap<>();
    private final Map<String, Waiter> waiters = new HashMap<>();
    /** Async waiters' callbacks, each called once at the next change; guarded by {@link #lock}. */
    private final ChangeWatchers watchers = new ChangeWatchers(lock);

    private record Hold(Acquisition attempt, long fence) {}

    private static final class Waiter {
        long seenVersion;
        long touchedAt;
        final Backoff backoff = new Backoff(MIN_BACKOFF, MAX_BACKOFF);
        int awaiting;

        Duration nextBackoff() {
            // jitter spreads processes that found the lock busy at the same moment
            return backoff.next();
        }
    }

    FileEntry(FileLockFile file) {
        this.file = file;
    }

    FileLockFile file() {
        return file;
    }

    AcquireResult tryAcquire(Acquisition attempt) throws IOException {
        lock.lock();
        try {
            long now = System.nanoTime();
            waiters.values().removeIf(w -> w.awaiting == 0 && now - w.touchedAt > STALE_WAITER_NANOS);
            Hold mine = holdOf(attempt.token());
            if (mine != null) {
                return AcquireResult.granted(mine.fence);
            }
            boolean shared = attempt.mode().isShared();
            boolean blockedInJvm = writer != null || !shared && !readers.isEmpty();
            if (!blockedInJvm) {
                Hold granted = take(attempt, shared);
                if (granted != null) {
                    waiters.remove(attempt.token());
                    if (shared) {
                        readers.put(attempt.token(), granted);
                    } else {
                        writer = granted;
                    }
                    return AcquireResult.granted(granted.fence);
                }
            }
            Waiter waiter = waiters.computeIfAbsent(attempt.token(), t -> new Waiter());
            waiter.seenVersion = version;
            waiter.touchedAt = now;
            // another process's release signals nothing: poll for it with a capped backoff
            return AcquireResult.busy(blockedInJvm ? IN_JVM_RETRY : waiter.nextBackoff());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the operating-system lock if this JVM does not hold it yet, and the next fencing token.
     * The counter mutex is taken first, so an inspection (which probes under the mutex) sees the
     * record of an exclusive holder complete.
     *
     * @return the new hold, or null if another process holds the lock (or the mutex, too long)
     */
    private Hold take(Acquisition attempt, boolean shared) throws IOException {
        try (FileLock mutex = file.lockMutex(ACQUIRE_MUTEX_NANOS)) {
            if (mutex == null) {
                return null;
            }
            FileLock taken = null;
            if (osLock == null) {
                taken = file.tryLock(shared);
                if (taken == null) {
                    return null;
                }
            }
            try {
                long fence = FileLockFile.nextFence(file.readCounter());
                if (shared) {
                    file.writeCounter(fence);
                } else {
                    file.writeCounterAndRecord(fence, attempt.mode(), attempt.holder());
                }
                if (taken != null) {
                    osLock = taken;
                }
                return new Hold(attempt, fence);
            } catch (IOException | RuntimeException e) {
                if (taken != null) {
                    releaseQuietly(taken);
                }
                throw e;
            }
        }
    }

    void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            Waiter waiter = waiters.get(attempt.token());
            if (waiter == null || waiter.seenVersion != version) {
                return;
            }
            long nanos;
            try {
                nanos = max.toNanos();
            } catch (ArithmeticException tooLong) {
                nanos = Long.MAX_VALUE;
            }
            waiter.awaiting++;
            try {
                changed.awaitNanos(Math.min(nanos, STALE_WAITER_NANOS / 2));
            } finally {
                waiter.awaiting--;
                waiter.touchedAt = System.nanoTime();
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return whether the attempt held the lock (now released) */
    boolean release(Acquisition attempt) {
        lock.lock();
        try {
            waiters.remove(attempt.token());
            String token = attempt.token();
            if (writer != null && writer.attempt.token().equals(token)) {
                clearRecord();
                writer = null;
                releaseOsLock();
                changed();
                return true;
            }
            if (readers.remove(token) != null) {
                if (readers.isEmpty()) {
                    releaseOsLock();
                }
                changed();
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    private void clearRecord() {
        try (FileLock mutex = file.lockMutex(SHORT_MUTEX_NANOS)) {
            if (mutex == null) {
                LOG.log(Level.DEBUG, "clearing the holder record of " + file.path() + " without the counter mutex");
            }
            file.clearRecord();
        } catch (IOException e) {
            LOG.log(
                    Level.WARNING,
                    "could not clear the holder record of " + file.path()
                            + " (inspect may show the holder until the lock is taken again): " + e);
        }
    }

    private void releaseOsLock() {
        FileLock held = osLock;
        osLock = null;
        releaseQuietly(held);
    }

    private void releaseQuietly(FileLock held) {
        try {
            held.release();
        } catch (IOException e) {
            // only a closed channel fails here, and closing it has dropped the lock already
            LOG.log(Level.WARNING, "could not release the lock on " + file.path() + ": " + e);
        }
    }

    private void changed() {
        version++;
        changed.signalAll();
        watchers.wakeAll();
    }

    /**
     * As {@link #awaitChange}, by a callback: {@code wake} is called at the next change in this JVM
     * (another process's release signals nothing: the caller's timer asks again).
     */
    NotifiesChanges.ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        lock.lock();
        try {
            Waiter waiter = waiters.get(attempt.token());
            if (waiter != null && waiter.seenVersion == version) {
                waiter.touchedAt = System.nanoTime();
                return watchers.add(wake);
            }
        } finally {
            lock.unlock();
        }
        wake.run();
        return () -> {};
    }

    void abandon(Acquisition attempt) {
        lock.lock();
        try {
            waiters.remove(attempt.token());
            if (holdOf(attempt.token()) != null) {
                release(attempt);
            }
        } finally {
            lock.unlock();
        }
    }

    boolean renew(Acquisition attempt) {
        lock.lock();
        try {
            return holdOf(attempt.token()) != null && osLock != null && osLock.isValid();
        } finally {
            lock.unlock();
        }
    }

    boolean isLocked() throws IOException {
        lock.lock();
        try {
            if (osLock != null) {
                return true;
            }
            // under the mutex, so the probe never makes another process's acquisition fail
            try (FileLock mutex = file.lockMutex(SHORT_MUTEX_NANOS)) {
                if (mutex == null) {
                    LOG.log(Level.DEBUG, "probing " + file.path() + " without the counter mutex");
                }
                FileLock probe = file.tryLock(false);
                if (probe == null) {
                    return true;
                }
                probe.release();
                return false;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * @param name the lock name, for the rows
     * @return the holds of the lock: this JVM's from memory, another process's from the file
     */
    List<LockInfo> inspect(String name) throws IOException {
        lock.lock();
        try {
            List<LockInfo> infos = new ArrayList<>();
            if (writer != null) {
                infos.add(info(name, writer.attempt.mode(), writer.attempt.holder(), writer.fence));
            }
            for (Hold reader : readers.values()) {
                infos.add(info(name, LockMode.READ, reader.attempt.holder(), reader.fence));
            }
            if (osLock != null) {
                return infos; // readers of other processes may share it, but this JVM cannot probe them
            }
            try (FileLock mutex = file.lockMutex(SHORT_MUTEX_NANOS)) {
                FileLock probe = file.tryLock(false);
                if (probe != null) {
                    probe.release();
                    return infos;
                }
                probe = file.tryLock(true);
                if (probe != null) {
                    probe.release();
                    infos.add(info(name, LockMode.READ, OTHER_READERS, -1));
                    return infos;
                }
                // Held exclusively by another process. Under the mutex its record is complete; the
                // fence check rejects a record that is not the current holder's (mutex not had).
                Optional<FileLockFile.HolderRecord> record = file.readRecord();
                long counter = file.readCounter();
                if (mutex != null
                        && record.isPresent()
                        && !record.get().mode().isShared()
                        && record.get().fence() == counter) {
                    infos.add(info(
                            name,
                            record.get().mode(),
                            record.get().holder(),
                            record.get().fence()));
                } else {
                    infos.add(info(name, LockMode.EXCLUSIVE, UNKNOWN_HOLDER, -1));
                }
                return infos;
            }
        } finally {
            lock.unlock();
        }
    }

    private static LockInfo info(String name, LockMode mode, String holder, long fence) {
        return new LockInfo(name, mode.label(), holder, fence, Optional.empty(), -1);
    }

    private Hold holdOf(String token) {
        if (writer != null && writer.attempt.token().equals(token)) {
            return writer;
        }
        return readers.get(token);
    }

    /** @return whether nothing in this JVM holds or waits for the lock; caller holds {@link #lock} */
    boolean isIdle() {
        return writer == null && readers.isEmpty() && waiters.isEmpty();
    }
}
