package io.cerberus.spi;

/**
 * An optional ability of a {@link LockEngine} that {@link LinesUpLocally lines up waiters
 * locally}: a release that grants the lock to the next waiter of the same client in one request.
 */
public interface HandsOver extends LinesUpLocally {

    /**
     * Releases {@code holder}'s exclusive hold and grants the same lock to {@code next}, another
     * exclusive attempt of the same client, in one request: owner, lease and a new fencing token
     * for {@code next}, as a grant by {@link LockEngine#tryAcquire} would give. The core calls it in
     * a release while {@code next} sleeps first in the client's line for that lock, and no more than
     * a few times in a row, so that other clients get their turn; the engine may still decline (say,
     * others queue in the store) and only release.
     *
     * @param holder the releasing attempt
     * @param next the attempt to grant
     * @return what was done; never handed unless {@code holder} held
     */
    HandOff handOver(Acquisition holder, Acquisition next);
}
