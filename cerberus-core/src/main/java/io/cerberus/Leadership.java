package io.cerberus;

import java.time.Duration;
import java.util.Optional;

/**
 * One participant in electing a leader among the clients that use the same name: at most one of
 * them leads at a time, for as long as it holds the election's lock (renewed while it leads). Get
 * one with {@link Cerberus#leadership(String)}; it contends once {@link #start() started}, without a
 * thread of its own, and again after each loss, until {@link #close() closed}.
 *
 * <p>Each time a participant is elected it gets a new <b>term</b>: the fencing token of its hold,
 * strictly larger than every earlier term of the name on the engine. Pass it with the leader's
 * writes so the resource can refuse the writes of a deposed leader that has not noticed yet (a
 * paused process wakes up believing it still leads). {@link #isLeader()} turns false as soon as the
 * client cannot vouch for the hold (a renewal that cannot reach the engine, a lease run out while
 * paused), before the loss is certain: pause the leader's work then.
 *
 * <pre>{@code
 * Leadership billing = cerberus.leadership("billing").onChange(new LeadershipListener() {
 *     public void elected(Leadership leadership, long term) { scheduler.resume(term); }
 *     public void revoked(Leadership leadership, String why) { scheduler.pause(); }
 * }).start();
 * }</pre>
 *
 * <p>Thread-safe. Listeners are called one at a time, in order, on the client's event thread.
 */
public interface Leadership extends AutoCloseable {

    /** @return the election's name (a lock name) */
    String name();

    /** @return this participant's id, shown as the holder by {@link #currentLeader()} and {@code cerberus inspect} */
    String participantId();

    /**
     * Starts contending; calling it again does nothing.
     *
     * @return this
     * @throws IllegalStateException if closed, or the client is closed
     */
    Leadership start();

    /**
     * Registers a listener of this participant's elections, losses and doubts.
     *
     * @param listener the listener
     * @return this
     */
    Leadership onChange(LeadershipListener listener);

    /** @return whether this participant leads now and its hold is vouched for */
    boolean isLeader();

    /**
     * The term of this participant's leadership: the fencing token of its hold.
     *
     * @return the term
     * @throws IllegalStateException if this participant does not lead now
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens (Redlock, Memcached)
     */
    long term();

    /**
     * The fence of this participant's term, for the resource it acts on: the term with its engine's epoch, ordered
     * across engine switches as {@link Lease#fence()} is.
     *
     * @return the term's fence
     * @throws IllegalStateException if this participant does not lead now
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens (Redlock, Memcached)
     * @throws LockLostException if the term's hold was no longer valid when its epoch was read
     */
    default Fence fence() {
        return new Fence(0, term());
    }

    /**
     * Waits until this participant leads, or {@code max} passed.
     *
     * @param max how long to wait at most
     * @return whether it leads
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if {@code max} is negative
     */
    boolean awaitLeadership(Duration max) throws InterruptedException;

    /**
     * Asks the engine who leads now. The answer may be stale by the time it is read; use it for
     * monitoring, never to decide who acts (use {@link #isLeader()} and the term).
     *
     * @return the leader's participant id, or empty when nobody leads
     * @throws UnsupportedCapabilityException if the engine cannot list its locks
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Optional<String> currentLeader();

    /**
     * Stops contending and, if this participant leads, steps down at once: the lock is released, so
     * another participant is elected without waiting for a lease to run out. Idempotent.
     */
    @Override
    void close();
}
