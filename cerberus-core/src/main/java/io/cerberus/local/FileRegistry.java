package io.cerberus.local;

import io.cerberus.spi.LockKey;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock files this JVM has open, shared by every {@code file:} engine in it: exactly one
 * {@link FileEntry} (one channel) per lock file, keyed by the file's real path.
 *
 * <p>POSIX record locks belong to the process, and closing any descriptor of a file drops all of
 * the process's locks on it; so a file must never be open twice in the JVM, and its one channel
 * is closed only when no call is using the entry and nothing in the JVM holds or waits for the
 * lock. Every use is bracketed by {@link #retain} and {@link #release}.
 *
 * <p>Lock order: the registry lock, then an entry's lock; never the other way round (callers
 * release an entry only after unlocking it).
 */
final class FileRegistry {
    private static final System.Logger LOG = System.getLogger(FileRegistry.class.getName());
    private static final ReentrantLock LOCK = new ReentrantLock();
    private static final Map<Path, FileEntry> ENTRIES = new HashMap<>();

    private FileRegistry() {}

    /**
     * Returns the entry of a lock file, opening the file if this JVM has not.
     *
     * @param path the real path of the file
     * @param key its lock, written into a new file; null when unknown (then the file is not created)
     * @return the entry; give it back with {@link #release}
     * @throws NoSuchFileException if the file is missing and {@code key} is null
     * @throws IOException if the file cannot be opened
     */
    static FileEntry retain(Path path, LockKey key) throws IOException {
        LOCK.lock();
        try {
            FileEntry entry = ENTRIES.get(path);
            if (entry == null) {
                entry = new FileEntry(FileLockFile.open(path, key, key != null));
                ENTRIES.put(path, entry);
            }
            entry.users++;
            return entry;
        } finally {
            LOCK.unlock();
        }
    }

    /**
     * @param path the real path of a lock file
     * @return its entry if this JVM has the file open, else null; give it back with {@link #release}
     */
    static FileEntry retainOpen(Path path) {
        LOCK.lock();
        try {
            FileEntry entry = ENTRIES.get(path);
            if (entry != null) {
                entry.users++;
            }
            return entry;
        } finally {
            LOCK.unlock();
        }
    }

    /**
     * Gives an entry back; closes its file when nothing in the JVM uses, holds or waits for it.
     *
     * @param entry an entry from {@link #retain} or {@link #retainOpen}
     */
    static void release(FileEntry entry) {
        LOCK.lock();
        try {
            if (--entry.users > 0) {
                return;
            }
            entry.lock.lock();
            try {
                if (!entry.isIdle()) {
                    return;
                }
            } finally {
                entry.lock.unlock();
            }
            ENTRIES.remove(entry.file().path());
            try {
                entry.file().close();
            } catch (IOException e) {
                LOG.log(
                        Level.WARNING,
                        "could not close lock file " + entry.file().path() + ": " + e);
            }
        } finally {
            LOCK.unlock();
        }
    }

    /** @return how many lock files this JVM has open (for tests) */
    static int openFiles() {
        LOCK.lock();
        try {
            return ENTRIES.size();
        } finally {
            LOCK.unlock();
        }
    }
}
