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

    @Override
    void close();
}
