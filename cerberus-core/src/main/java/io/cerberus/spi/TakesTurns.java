package io.cerberus.spi;

import java.time.Duration;

/**
 * An optional ability of an engine that {@link LinesUpLocally lines up waiters locally} and can
 * tell, in its release, whether a waiter of another client wants the lock (a mark in the store, a
 * refused request): then clients take turns. A <b>streak</b> of this client's holds of a lock begins
 * with a grant, goes on through hand-offs and grants while its threads wait for one another, and
 * ends when a busy answer shows a holder of another client. Within {@link #turn()} from the streak's
 * first grant the engine may keep the lock for this client's next waiter though another client
 * waits; after it, the engine releases the lock for all and says it yielded, and the core's line
 * holds back for {@link #holdBack()}, so that the other client takes the lock for its own turn.
 *
 * <p>The core calls {@link #release(Acquisition, Acquisition, boolean)} instead of
 * {@link LockEngine#release} for every exclusive hold. Nothing depends on turns for safety: the
 * store alone decides who holds.
 */
public interface TakesTurns extends LinesUpLocally {

    /** @return how long a lock another client wants stays with this client's threads, counted from the streak's first grant */
    Duration turn();

    /** @return how long this client's line does not ask after a release that yielded to another client */
    Duration holdBack();

    /**
     * Releases {@code holder}'s exclusive hold, knowing this client's line for the lock.
     *
     * @param holder the releasing attempt
     * @param next the attempt asleep first in this client's line, which the engine may grant in the
     *     same request (owner, lease and a new fencing token, as {@link LockEngine#tryAcquire}
     *     would); null when no waiter is ready to be handed the lock
     * @param withinTurn whether the streak of this client's holds that {@code holder} belongs to began
     *     less than {@link #turn()} ago: the engine may leave the lock to this client (hand it to
     *     {@code next}, or, with a {@code next}, release it without waking other clients)
     * @return what was done: released, handed to {@code next}, or released for another client
     *     ({@link HandOff#yielded()})
     */
    HandOff release(Acquisition holder, Acquisition next, boolean withinTurn);
}
