package io.cerberus.jdbc;

import io.cerberus.spi.NotifiesChanges;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wake-ups of waiters in this JVM: a release by any engine of this JVM, or a PostgreSQL
 * notification, bumps the key's version and wakes the threads that wait on it, and calls the
 * callbacks of async waiters ({@link Waiters#onChange}) once each, after the key's lock is let go.
 * A waiter registers before it tries, so a release between its busy answer and its wait is not
 * missed. Keys are digests; a key shared by two databases only wakes a waiter early, which waiting
 * allows.
 */
final class Wakeups {
    static final Wakeups JVM = new Wakeups();
    private final Map<String, Slot> slots = new ConcurrentHashMap<>();

    /** One key's version and waiters; a lock and condition, not a monitor, so a waiting virtual thread frees its carrier. */
    private static final class Slot {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition bumped = lock.newCondition();
        private long version;
        private int registered;
        /** Async waiters' callbacks, called once at the next bump. */
        private final List<Runnable> callbacks = new ArrayList<>();

        long version() {
            lock.lock();
            try {
                return version;
            } finally {
                lock.unlock();
            }
        }

        /** @return the number of registrations after adding {@code change} */
        int registrations(int change) {
            lock.lock();
            try {
                return registered += change;
            } finally {
                lock.unlock();
            }
        }

        void bump() {
            List<Runnable> due;
            lock.lock();
            try {
                version++;
                bumped.signalAll();
                due = List.copyOf(callbacks);
                callbacks.clear();
            } finally {
                lock.unlock();
            }
            due.forEach(Runnable::run);
        }

        /** Calls {@code wake} at the next bump, or at once if the version is no longer {@code seen}. */
        NotifiesChanges.ChangeWatch onBump(long seen, Runnable wake) {
            lock.lock();
            try {
                if (version == seen) {
                    Runnable once = wake::run; // its own identity, so that cancelling removes this registration only
                    callbacks.add(once);
                    return () -> forget(once);
                }
            } finally {
                lock.unlock();
            }
            wake.run();
            return () -> {};
        }

        private void forget(Runnable callback) {
            lock.lock();
            try {
                callbacks.remove(callback);
            } finally {
                lock.unlock();
            }
        }

        int callbacks() {
            lock.lock();
            try {
                return callbacks.size();
            } finally {
                lock.unlock();
            }
        }

        void awaitOther(long seen, long deadline) throws InterruptedException {
            lock.lock();
            try {
                while (version == seen) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return;
                    }
                    bumped.awaitNanos(left);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** A waiter's registration for one key's wake-ups, from its first try until it is granted or gives up. */
    final class Registration implements AutoCloseable {
        private final String key;
        private final Slot slot;
        private boolean closed;

        private Registration(String key, Slot slot) {
            this.key = key;
            this.slot = slot;
        }

        /** @return the key's version now */
        long version() {
            return slot.version();
        }

        /**
         * Waits until the key's version differs from {@code seen}, or {@code max} has passed.
         *
         * @throws InterruptedException if interrupted
         */
        void await(long seen, Duration max) throws InterruptedException {
            slot.awaitOther(seen, System.nanoTime() + max.toNanos());
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            slots.computeIfPresent(key, (k, s) -> s.registrations(-1) == 0 ? null : s);
        }
    }

    Registration register(String key) {
        Slot slot = slots.compute(key, (k, s) -> {
            Slot result = s == null ? new Slot() : s;
            result.registrations(1);
            return result;
        });
        return new Registration(key, slot);
    }

    /** @return how many async waiters' callbacks wait on {@code key} now (for tests) */
    int callbacks(String key) {
        Slot slot = slots.get(key);
        return slot == null ? 0 : slot.callbacks();
    }

    /** Wakes the waiters of {@code key}, if any. */
    void signal(String key) {
        Slot slot = slots.get(key);
        if (slot != null) {
            slot.bump();
        }
    }

    /**
     * The registrations of one engine's waiting attempts, by token: an attempt notes the key's version
     * before each ask, so that a change after it ends its next wait; its registration is dropped when
     * it is granted or gives up.
     */
    static final class Waiters {
        private final Map<String, Waiter> byToken = new ConcurrentHashMap<>();

        private static final class Waiter {
            final Registration registration;
            volatile long seen;

            Waiter(Registration registration) {
                this.registration = registration;
            }
        }

        /** Notes the version of {@code key} for the attempt {@code token}, which is about to ask. */
        void asking(String token, String key) {
            Waiter waiter = byToken.computeIfAbsent(token, t -> new Waiter(JVM.register(key)));
            waiter.seen = waiter.registration.version();
        }

        /**
         * Waits until the key of the attempt changed since its last ask, or {@code max} passed.
         *
         * @throws InterruptedException if interrupted
         */
        void await(String token, Duration max) throws InterruptedException {
            Waiter waiter = byToken.get(token);
            if (waiter == null) {
                TimeUnit.NANOSECONDS.sleep(max.toNanos());
                return;
            }
            waiter.registration.await(waiter.seen, max);
        }

        /**
         * Calls {@code wake} once when the key of the attempt changes, or at once if it changed
         * since its last ask or the attempt is not waiting.
         *
         * @return removes the callback if it was not called yet
         */
        NotifiesChanges.ChangeWatch onChange(String token, Runnable wake) {
            Waiter waiter = byToken.get(token);
            if (waiter == null) {
                wake.run();
                return () -> {};
            }
            return waiter.registration.slot.onBump(waiter.seen, wake);
        }

        /** The attempt was granted or gave up: its registration ends. */
        void done(String token) {
            Waiter waiter = byToken.remove(token);
            if (waiter != null) {
                waiter.registration.close();
            }
        }

        /** Ends every registration (the engine is closing). */
        void close() {
            byToken.keySet().forEach(this::done);
        }
    }
}
