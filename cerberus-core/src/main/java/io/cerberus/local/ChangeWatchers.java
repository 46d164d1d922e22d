package io.cerberus.local;

import io.cerberus.spi.NotifiesChanges;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The async waiters of one lock in a local store: callbacks each called once at the next change.
 * Guarded by the store's lock, which the caller holds for {@link #add} and {@link #wakeAll}; a
 * watch's cancel takes it itself.
 */
final class ChangeWatchers {
    private final ReentrantLock lock;
    private final List<Runnable> watchers = new ArrayList<>();

    ChangeWatchers(ReentrantLock lock) {
        this.lock = lock;
    }

    /** Registers {@code wake}; caller holds the lock. */
    NotifiesChanges.ChangeWatch add(Runnable wake) {
        watchers.add(wake);
        return () -> {
            lock.lock();
            try {
                watchers.remove(wake);
            } finally {
                lock.unlock();
            }
        };
    }

    /** Calls every registered callback once and forgets them; caller holds the lock. */
    void wakeAll() {
        if (watchers.isEmpty()) {
            return;
        }
        List<Runnable> woken = List.copyOf(watchers);
        watchers.clear();
        woken.forEach(Runnable::run);
    }
}
