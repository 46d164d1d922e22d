package io.cerberus;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A named lock shared by every client of the same engine and namespace.
 *
 * <p>As a {@link Lock} it keeps the JDK contract: holds belong to the thread that took them, are
 * reentrant (counted in the client, no round trip), and {@link #unlock()} by a thread that does
 * not hold the lock throws {@link IllegalMonitorStateException}. While held without an explicit
 * lease time, the lease is renewed every lease/3 so long work keeps the lock; if the lease is lost
 * anyway, {@link #unlock()} throws {@link LockLostException}.
 *
 * <p>The handle style ({@link #acquire(Duration)}) returns a {@link Lease} owned by its token, not
 * by a thread: each call is a separate acquisition (never reentrant), and the lease may be closed
 * from any thread.
 *
 * <p>Differences from the JDK: a negative wait time is rejected with
 * {@link IllegalArgumentException} instead of meaning "do not wait"; {@link #newCondition()} is
 * not supported. Instances are thread-safe and cheap; {@code cerberus.lock("x")} twice gives two
 * views of the same lock.
 */
public interface DistributedLock extends Lock {

    /** @return the lock name, as given */
    String name();

    /**
     * Acquires the lock for the current thread with an explicit lease: no renewal, the engine
     * frees the lock {@code leaseTime} after it was granted even if it is not unlocked.
     *
     * @param leaseTime how long the lock is kept at most; positive
     * @throws IllegalArgumentException if {@code leaseTime} is not positive
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    void lock(Duration leaseTime);

    /**
     * Tries to acquire the lock for the current thread within {@code waitTime}, with an explicit
     * lease (no renewal).
     *
     * @param waitTime how long to wait for a busy lock; zero means try once
     * @param leaseTime how long the lock is kept at most; positive
     * @param unit the unit of both times
     * @return {@code true} if acquired, {@code false} if still busy when the wait time ran out
     * @throws InterruptedException if interrupted while waiting (the attempt is withdrawn)
     * @throws IllegalArgumentException if a time is negative, or the lease is zero
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    boolean tryLock(long waitTime, long leaseTime, TimeUnit unit) throws InterruptedException;

    /**
     * Acquires the lock as a {@link Lease} not bound to any thread, renewed while it is open.
     *
     * @param wait how long to wait for a busy lock
     * @return the lease; close it to release
     * @throws LockTimeoutException if the lock was still busy after {@code wait}
     * @throws InterruptedException if interrupted while waiting (the attempt is withdrawn)
     * @throws IllegalArgumentException if {@code wait} is negative
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Lease acquire(Duration wait) throws InterruptedException;

    /**
     * Like {@link #acquire(Duration)}, with an explicit lease time and no renewal.
     *
     * @param wait how long to wait for a busy lock
     * @param leaseTime how long the lock is kept at most; positive
     * @return the lease; close it to release
     * @throws LockTimeoutException if the lock was still busy after {@code wait}
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if {@code wait} is negative or {@code leaseTime} not positive
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Lease acquire(Duration wait, Duration leaseTime) throws InterruptedException;

    /**
     * Like {@link #acquire(Duration)}, but contention is not an error.
     *
     * @param wait how long to wait for a busy lock
     * @return the lease, or empty if the lock was still busy after {@code wait}
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if {@code wait} is negative
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Optional<Lease> tryAcquire(Duration wait) throws InterruptedException;

    /**
     * Like {@link #acquire(Duration)}, without holding a thread while it waits: the wait is driven
     * by the engine's wake-ups and the client's timers, its requests made on the client's async
     * pool. The returned future completes with the lease (renewed while open), or exceptionally
     * with {@link LockTimeoutException} when the lock was still busy after {@code wait}, or
     * {@link EngineUnavailableException} when the engine could not be reached within it.
     *
     * <p>Cancelling the future (or completing it yourself) withdraws the attempt: it leaves the
     * engine's queue and the next waiter goes on; a grant that arrives after the cancel is
     * released, never left held. Cancelling a stage derived from it ({@code thenApply} and the
     * like) does not, as in the JDK.
     *
     * <pre>{@code
     * lock.acquireAsync(Duration.ofSeconds(5))
     *     .thenCompose(lease -> store.writeAsync(data, lease.fencingToken())
     *         .whenComplete((done, error) -> lease.releaseAsync()));
     * }</pre>
     *
     * @param wait how long to wait for a busy lock
     * @return the future lease
     * @throws IllegalArgumentException if {@code wait} is negative
     */
    CompletableFuture<Lease> acquireAsync(Duration wait);

    /**
     * Like {@link #acquireAsync(Duration)}, with an explicit lease time and no renewal.
     *
     * @param wait how long to wait for a busy lock
     * @param leaseTime how long the lock is kept at most; positive
     * @return the future lease
     * @throws IllegalArgumentException if {@code wait} is negative or {@code leaseTime} not positive
     */
    CompletableFuture<Lease> acquireAsync(Duration wait, Duration leaseTime);

    /**
     * Like {@link #acquireAsync(Duration)}, but contention is not an error: the future gives an
     * empty optional when the lock was still busy after {@code wait}.
     *
     * @param wait how long to wait for a busy lock
     * @return the future lease, or empty
     * @throws IllegalArgumentException if {@code wait} is negative
     */
    CompletableFuture<Optional<Lease>> tryAcquireAsync(Duration wait);

    /** @return whether the current thread holds this lock through this client */
    boolean isHeldByCurrentThread();

    /**
     * Asks the engine whether anyone holds the lock now. The answer may be stale by the time it
     * is read; use it for monitoring, never for mutual exclusion.
     *
     * @return {@code true} if some client holds the lock
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    boolean isLocked();

    /**
     * The lease behind the current thread's hold: its fencing token, validity and loss listeners.
     * Release the hold with {@link #unlock()}; this lease's {@link Lease#close()} refuses.
     *
     * @return the lease of the current thread's hold
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     */
    Lease lease();

    /**
     * Not supported: a condition would need the lock to be released and re-acquired atomically
     * with a signal across processes, which the engines do not offer.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    Condition newCondition();
}
