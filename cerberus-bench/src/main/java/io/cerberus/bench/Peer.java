package io.cerberus.bench;

import java.util.concurrent.CompletableFuture;

/**
 * One lock implementation under test. {@link #lock(String)} blocks until granted and returns what
 * {@link Held#unlock()} releases; implementations are thread-safe.
 */
interface Peer extends AutoCloseable {

    /** What a granted lock gives back to release it. */
    @FunctionalInterface
    interface Held {
        void unlock();
    }

    /** What a lock granted by {@link #lockAsync} gives back: its fencing token, and its release. */
    interface AsyncHeld {
        /** The token of a peer whose grants carry none. */
        long NO_TOKEN = Long.MIN_VALUE;

        /** @return the grant's fencing token, or {@link #NO_TOKEN} */
        long fencingToken();

        /** @return the release, complete when the server answered */
        CompletableFuture<?> unlockAsync();
    }

    /** @return the name in reports */
    String name();

    /**
     * Acquires the lock of this name, waiting as long as it takes.
     *
     * @param name the lock name
     * @return the hold, to release
     */
    Held lock(String name) throws InterruptedException;

    /**
     * Acquires the lock of this name without holding a thread while it waits, as the async workload
     * does: the future completes with the hold once granted.
     *
     * @param name the lock name
     * @param waiter the waiter's number, unique among the workload's waiters: who owns the hold for a
     *     peer whose async locks are owned by a thread id (Redisson's)
     * @return the future hold
     * @throws UnsupportedOperationException for a peer with no async lock in the bench
     */
    default CompletableFuture<AsyncHeld> lockAsync(String name, long waiter) {
        throw new UnsupportedOperationException(name() + " has no async lock in the bench");
    }

    /**
     * Asks the server, without waiting and without keeping anything, whether some client holds the
     * lock of this name: how the held-locks workload checks, from a second client, that the first
     * still holds every lock. Peers without such a query try the lock at once and undo a success.
     *
     * @param name the lock name
     * @return whether the name is held
     * @throws UnsupportedOperationException for the floors, which hold nothing
     */
    default boolean isLocked(String name) throws InterruptedException {
        throw new UnsupportedOperationException(name() + " holds nothing to ask about");
    }

    @Override
    void close();
}
