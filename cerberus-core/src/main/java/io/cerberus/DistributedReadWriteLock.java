package io.cerberus;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A pair of locks over one name: many readers at a time, or one writer. The write lock excludes
 * the plain {@link Cerberus#lock(String)} of the same name too (they are one lock).
 *
 * <p>Reentrancy: a thread holding the write lock may take the read lock (counted inside the write
 * hold; the write stays held in the engine until both are released). A thread holding only the
 * read lock cannot take the write lock: that upgrade would deadlock and is refused with
 * {@link IllegalStateException}.
 */
public interface DistributedReadWriteLock extends ReadWriteLock {

    /** @return the shared lock */
    @Override
    DistributedLock readLock();

    /** @return the exclusive lock */
    @Override
    DistributedLock writeLock();
}
