package io.cerberus;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One hold of a {@link MultiLock}: a {@link Lease} per name. Owned by its token, not by a thread.
 * Closing releases every lock, in the reverse of the order they were taken (once). Thread-safe.
 *
 * <p>The hold is lost as a whole: when any member's lease is lost, {@link #isValid()} turns false,
 * the listeners are told once with that member's lease (its {@link Lease#lockName()} says which),
 * and {@link #close()} throws {@link LockLostException} after releasing the others. The other
 * members stay held until then.
 */
public interface MultiLease extends AutoCloseable {

    /** @return one lease per name, in the order they were taken */
    List<Lease> leases();

    /**
     * @param name one of the multi-lock's names
     * @return the lease of that name: its fencing token is the one to give the resource it protects
     * @throws IllegalArgumentException if the name is not a member
     */
    Lease lease(String name);

    /** @return {@code true} while every member is held and none is known to be lost or expired */
    boolean isValid();

    /**
     * Registers a listener told once when a member is lost, with that member's lease. If one is
     * already lost the listener is called at once. Not called on close.
     *
     * @param listener the listener, not {@code null}
     */
    void onLost(LeaseLossListener listener);

    /**
     * Releases as {@link #close()} does, on the client's async pool.
     *
     * @return the future release, completed exceptionally with what {@link #close()} would throw
     */
    CompletableFuture<Void> releaseAsync();

    /**
     * Releases every lock, in reverse order. Closing again does nothing.
     *
     * @throws LockLostException if a member was lost before it was released
     * @throws EngineUnavailableException if an engine could not be told (the others are still
     *     released; the engine frees that lock when its lease ends)
     */
    @Override
    void close();
}
