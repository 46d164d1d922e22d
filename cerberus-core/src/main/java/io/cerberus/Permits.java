package io.cerberus;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The permits one acquisition of a {@link DistributedSemaphore} took. Owned by its token, not by a
 * thread: it may be closed from any thread or callback, and given back from another process by its
 * {@link #id()}. Closing gives every permit back (once; closing again does nothing). Thread-safe.
 *
 * <p>The permits are lost together: when any of them is lost (its lease ran out, the engine session
 * ended, someone released it by id), {@link #isValid()} turns false, the listeners are told once, and
 * {@link #close()} throws {@link LockLostException} after giving back the rest.
 */
public interface Permits extends AutoCloseable {

    /** @return the semaphore's name */
    String semaphoreName();

    /** @return how many permits this handle holds */
    int count();

    /** @return the permits, by slot */
    List<Permit> permits();

    /**
     * The handle's id, for {@link DistributedSemaphore#release(String)} in any process: the slots
     * and their fencing tokens, with no secret in it.
     *
     * @return the id
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens (Redlock)
     */
    String id();

    /** @return the name of the engine that granted the permits; they are given back there */
    String engineName();

    /** @return the lease time: how long the engine keeps the permits if this client stops renewing them */
    Duration leaseTime();

    /** @return {@code true} while every permit is held and none is known to be lost or expired */
    boolean isValid();

    /**
     * Registers a listener told once when the permits are lost, with the reason naming the slot that
     * was lost first. If they are already lost the listener is called at once. Not called on close.
     *
     * @param listener the listener, not {@code null}
     */
    void onLost(Consumer<LockLostException> listener);

    /**
     * Gives the permits back as {@link #close()} does, on the client's async pool.
     *
     * @return the future release, completed exceptionally with what {@link #close()} would throw
     */
    CompletableFuture<Void> releaseAsync();

    /**
     * Gives every permit back. Closing an already closed handle does nothing.
     *
     * @throws LockLostException if a permit was lost before: more than the semaphore's count may
     *     have been held meanwhile
     * @throws EngineUnavailableException if the engine could not be told; the permits are then freed
     *     when their leases end
     */
    @Override
    void close();
}
