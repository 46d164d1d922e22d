package io.cerberus;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One acquisition of a distributed lock. Unlike the thread-bound {@link DistributedLock} facade,
 * a lease is owned by its random token, not by a thread: it may be closed from another thread or
 * a callback. Closing releases the lock (once; closing again does nothing). Thread-safe.
 *
 * <pre>{@code
 * try (Lease lease = cerberus.lock("report").acquire(Duration.ofSeconds(5))) {
 *     store.write(data, lease.fencingToken());
 * }
 * }</pre>
 */
public interface Lease extends AutoCloseable {

    /** @return the name of the lock this lease holds */
    String lockName();

    /**
     * @return the name of the engine that granted this lease; it stays there, and is released
     *     there, when the client switches engines ({@link Cerberus#switchEngine()})
     */
    String engineName();

    /**
     * A number strictly larger than that of every earlier acquisition of the same lock name on the
     * same engine. Pass it to the protected resource so it can refuse writes from a holder whose
     * lease has since been lost.
     *
     * @return the fencing token of this acquisition
     * @throws UnsupportedCapabilityException if the engine cannot give fencing tokens (Redlock)
     */
    long fencingToken();

    /**
     * The fence to give the protected resource: this hold's {@link #fencingToken()} with the epoch of the engine that
     * granted it, so that fences stay ordered across engine switches ({@link Fence}). The first call reads the
     * engine's epoch (one round trip on an engine that keeps epochs); later calls return the same fence.
     *
     * @return this hold's fence
     * @throws UnsupportedCapabilityException if the engine cannot give fencing tokens (Redlock)
     * @throws LockLostException if the hold was no longer valid when its epoch was read
     * @throws EngineUnavailableException if the engine cannot be reached to read its epoch
     */
    default Fence fence() {
        return new Fence(0, fencingToken());
    }

    /**
     * @return {@code true} while the lease is held and not known to be lost or expired; turns
     *     {@code false} when a renewal fails, the lease time passes, the engine session ends, or
     *     the lease is closed
     */
    boolean isValid();

    /**
     * @return the lease time: how long the engine keeps the lock if this client stops renewing it
     */
    Duration leaseTime();

    /**
     * How long the engine keeps this lock after this client falls silent — crashes, is paused, or
     * loses its network — before another client can take it. On Redis and a SQL lease-row engine
     * it is {@link #leaseTime()}; on ZooKeeper and etcd it is the session timeout or lease TTL the
     * server granted this client (it follows the client's default lease unless the URI sets it, and
     * the server may raise it to its minimum); empty where the lock lasts as long as the holder's
     * connection or process (a SQL session lock, a file lock): a crash frees it at once and a
     * paused holder keeps it.
     *
     * @return the time a silent holder keeps this lock, or empty when that is its connection's life
     */
    Optional<Duration> silentHolderExpiry();

    /**
     * Registers a listener told when this lease is lost. If it is already lost the listener is
     * called at once (on the event thread). Not called on a normal close.
     *
     * @param listener the listener, not {@code null}
     */
    void onLost(LeaseLossListener listener);

    /**
     * Releases the lock as {@link #close()} does, without blocking the caller: the request is made
     * on the client's async pool. The future completes when the engine answered, exceptionally
     * with what {@link #close()} would throw.
     *
     * @return the future release
     */
    default CompletableFuture<Void> releaseAsync() {
        return CompletableFuture.runAsync(this::close);
    }

    /**
     * Releases the lock. Closing an already closed lease does nothing.
     *
     * @throws LockLostException if the lease was lost before it was closed: someone else may have
     *     held the lock meanwhile
     * @throws EngineUnavailableException if the engine could not be told; the lock is then freed
     *     by the engine when its lease ends
     * @throws UnsupportedOperationException for the lease of a thread-bound hold
     *     ({@link DistributedLock#lease()}): release it with {@link DistributedLock#unlock()}
     */
    @Override
    void close();
}
