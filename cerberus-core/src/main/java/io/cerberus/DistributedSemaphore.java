package io.cerberus;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A named pool of permits shared by every client of the same engine and namespace: at most
 * {@link #permits()} of them are held at once, across threads, processes and machines.
 *
 * <pre>{@code
 * DistributedSemaphore partnerApi = cerberus.semaphore("partner-api", 4);
 * try (Permits permit = partnerApi.acquire(1, Duration.ofSeconds(10))) {
 *     partner.call(request);      // at most 4 calls at once in the whole cluster
 * }
 * }</pre>
 *
 * <p>Each acquisition is a {@link Permits} handle, owned by its token and not by a thread: renewed
 * while open (or kept for an explicit lease time), freed by the engine when its lease runs out after
 * a crash, and told when it is lost. Taking several permits is all or nothing: a caller never holds
 * part of what it asked for while it waits, so two callers asking for most of the permits each do
 * not deadlock.
 *
 * <p>The permits are numbered slots, {@code 0} to {@code permits() - 1}; a handle holds distinct
 * slots, each with its own fencing token, so a protected resource can fence each slot as it fences
 * a lock ({@link Permit#fenceName()}). A client that opens the name with a count takes only slots
 * below that count: while clients disagree (a rolling change of the count), at most the largest
 * count is held in all, and at most its own count through each client's handles.
 *
 * <p>Thread-safe and cheap: making one sends nothing.
 */
public interface DistributedSemaphore {

    /** @return the semaphore's name, as given */
    String name();

    /** @return how many permits this semaphore has: the most held at once */
    int permits();

    /**
     * Takes {@code count} permits, renewed while the handle is open.
     *
     * @param count how many permits, 1 to {@link #permits()}
     * @param wait how long to wait for them
     * @return the permits; close the handle to give them back
     * @throws LockTimeoutException if they were not all free within {@code wait}
     * @throws InterruptedException if interrupted while waiting (nothing is held)
     * @throws IllegalArgumentException if {@code count} is out of range or {@code wait} negative
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Permits acquire(int count, Duration wait) throws InterruptedException;

    /**
     * Like {@link #acquire(int, Duration)}, with an explicit lease time and no renewal: the engine
     * frees the permits {@code leaseTime} after they were granted even if the handle is not closed.
     *
     * @param count how many permits, 1 to {@link #permits()}
     * @param wait how long to wait for them
     * @param leaseTime how long the permits are kept at most; positive
     * @return the permits
     * @throws LockTimeoutException if they were not all free within {@code wait}
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if an argument is out of range
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Permits acquire(int count, Duration wait, Duration leaseTime) throws InterruptedException;

    /**
     * Like {@link #acquire(int, Duration)}, but a full semaphore is not an error.
     *
     * @param count how many permits, 1 to {@link #permits()}
     * @param wait how long to wait for them; zero tries once
     * @return the permits, or empty if they were not all free within {@code wait}
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if {@code count} is out of range or {@code wait} negative
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Optional<Permits> tryAcquire(int count, Duration wait) throws InterruptedException;

    /**
     * Like {@link #acquire(int, Duration)}, without holding a thread while it waits. The future
     * completes exceptionally with {@link LockTimeoutException} when the permits were not all free
     * within {@code wait}. Cancelling it withdraws the attempt; permits granted after the cancel are
     * given back.
     *
     * @param count how many permits, 1 to {@link #permits()}
     * @param wait how long to wait for them
     * @return the future permits
     * @throws IllegalArgumentException if {@code count} is out of range or {@code wait} negative
     */
    CompletableFuture<Permits> acquireAsync(int count, Duration wait);

    /**
     * Like {@link #acquireAsync(int, Duration)}, but a full semaphore is not an error: the future
     * gives an empty optional.
     *
     * @param count how many permits, 1 to {@link #permits()}
     * @param wait how long to wait for them
     * @return the future permits, or empty
     * @throws IllegalArgumentException if {@code count} is out of range or {@code wait} negative
     */
    CompletableFuture<Optional<Permits>> tryAcquireAsync(int count, Duration wait);

    /**
     * Asks the engine how many permits are free now: one read per permit. The answer may be stale
     * by the time it is read; use it for monitoring, never to decide who may go.
     *
     * @return the free permits, 0 to {@link #permits()}
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    int availablePermits();

    /**
     * Gives back permits held by any client, in this process or another, by the id of their handle
     * ({@link Permits#id()}): for a handle passed to another process, or an operator's cleanup. A
     * slot that changed hands since keeps its new holder (each slot is named by its fencing token).
     * The old holder learns it lost them.
     *
     * @param permitsId the id of a handle
     * @return whether any permit was given back
     * @throws IllegalArgumentException if the id is not one {@link Permits#id()} makes for this
     *     semaphore
     * @throws UnsupportedCapabilityException if the engine cannot free another process's hold
     *     (a file lock, a database session lock) or has no fencing tokens (Redlock)
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    boolean release(String permitsId);
}
