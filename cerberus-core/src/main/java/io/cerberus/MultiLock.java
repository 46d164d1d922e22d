package io.cerberus;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Several locks taken as one: all of them or none. The names are taken one by one in one order
 * every client shares (sorted), so callers asking for {@code {a, b}} and {@code {b, a}} never
 * deadlock; they are given back in the reverse order. A name given twice is taken once.
 *
 * <pre>{@code
 * try (MultiLease both = cerberus.multiLock("account:" + from, "account:" + to).acquire(Duration.ofSeconds(5))) {
 *     ledger.transfer(from, to, amount, both.lease("account:" + from).fencingToken());
 * }
 * }</pre>
 *
 * <p>Each member is the plain exclusive lock of its name ({@link Cerberus#lock(String)}): a
 * multi-lock and a single lock of a member exclude each other. Holds are handles
 * ({@link MultiLease}), owned by their token, never reentrant: a thread that already holds a member
 * waits for itself. It is not a {@link DistributedLock}: a hold has one fencing token per name, not
 * one, and a thread-bound {@code lock()} over several names would make reentrancy ambiguous when
 * two multi-locks share a member.
 *
 * <p>Thread-safe and cheap: making one sends nothing.
 */
public interface MultiLock {

    /** @return the distinct names, in the order they are taken */
    List<String> names();

    /**
     * Takes every lock, renewed while the hold is open.
     *
     * @param wait how long to wait for all of them, in total
     * @return the hold; close it to release every lock
     * @throws LockTimeoutException if they were not all taken within {@code wait} (none is held)
     * @throws InterruptedException if interrupted while waiting (none is held)
     * @throws IllegalArgumentException if {@code wait} is negative
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    MultiLease acquire(Duration wait) throws InterruptedException;

    /**
     * Like {@link #acquire(Duration)}, with an explicit lease time and no renewal.
     *
     * @param wait how long to wait for all of them, in total
     * @param leaseTime how long each lock is kept at most, from its own grant; positive
     * @return the hold
     * @throws LockTimeoutException if they were not all taken within {@code wait}
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if {@code wait} is negative or {@code leaseTime} not positive
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    MultiLease acquire(Duration wait, Duration leaseTime) throws InterruptedException;

    /**
     * Like {@link #acquire(Duration)}, but contention is not an error.
     *
     * @param wait how long to wait for all of them, in total; zero tries each once
     * @return the hold, or empty if they were not all taken within {@code wait}
     * @throws InterruptedException if interrupted while waiting
     * @throws IllegalArgumentException if {@code wait} is negative
     * @throws EngineUnavailableException if the engine cannot be reached
     */
    Optional<MultiLease> tryAcquire(Duration wait) throws InterruptedException;

    /**
     * Like {@link #acquire(Duration)}, without holding a thread while it waits. Cancelling the
     * future withdraws the attempt and gives back what it took.
     *
     * @param wait how long to wait for all of them, in total
     * @return the future hold, completed exceptionally with {@link LockTimeoutException} when the
     *     locks were not all taken within {@code wait}
     * @throws IllegalArgumentException if {@code wait} is negative
     */
    CompletableFuture<MultiLease> acquireAsync(Duration wait);

    /**
     * Like {@link #acquireAsync(Duration)}, but contention is not an error.
     *
     * @param wait how long to wait for all of them, in total
     * @return the future hold, or empty
     * @throws IllegalArgumentException if {@code wait} is negative
     */
    CompletableFuture<Optional<MultiLease>> tryAcquireAsync(Duration wait);
}
