package io.cerberus.spi;

/**
 * An optional ability of a {@link LockEngine}: an operator may free a hold of another process (a
 * stuck lock), named by the fencing token that {@link Inspects#inspect} showed for it. The condition
 * on the token is what makes it safe to do by hand: a lock that changed hands since it was looked
 * at has a newer token, and is not freed.
 *
 * <p>The old holder must learn that it lost the hold: on an engine with leases, its next renewal is
 * refused (the owner check fails); on an engine whose holds are not renewed (a session holds them),
 * the engine watches its holds and reports the loss ({@link LossReporter}). An engine that cannot
 * free another process's hold (an OS file lock, a database session lock) does not implement this,
 * and says why in {@link LockEngine#whyNot} for {@link io.cerberus.Capability#FENCING} or in its docs.
 */
public interface ReleasesByForce {

    /**
     * Frees every hold of {@code key} whose fencing token is {@code fencingToken} (one, for an
     * exclusive lock), whoever holds it, and wakes its waiters; frees nothing if no hold has that
     * token now.
     *
     * @param key the lock
     * @param fencingToken the token of the hold to free, as inspected
     * @return whether a hold was freed
     */
    boolean forceRelease(LockKey key, long fencingToken);
}
