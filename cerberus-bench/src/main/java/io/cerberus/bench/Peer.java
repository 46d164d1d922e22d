package io.cerberus.bench;

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
