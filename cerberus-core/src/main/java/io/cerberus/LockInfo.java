package io.cerberus;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One hold of a lock as an engine reports it, for {@link Cerberus#inspect(String)} and the
 * {@code cerberus inspect} command. A snapshot: it may be stale as soon as it is read.
 *
 * @param name the lock name
 * @param mode {@code exclusive}, {@code fair}, {@code read} or {@code write}
 * @param holder who holds it (process id, host and thread as the holder described itself)
 * @param fencingToken the fencing token of the hold, or -1 when the engine has none
 * @param leaseRemaining how long the engine keeps the lock without a renewal; empty when the hold
 *     lives with the holder's session instead
 * @param waiters how many attempts wait in the engine for the lock (a client lines up its own
 *     threads, so mostly one per waiting client), or -1 when the engine cannot tell: an engine that
 *     does not see every waiter (Redis, whose plain locks are raced for, not queued) says -1, never a
 *     count that misses some
 */
public record LockInfo(
        String name, String mode, String holder, long fencingToken, Optional<Duration> leaseRemaining, int waiters) {

    /** Checks that no component is {@code null}. */
    public LockInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(leaseRemaining, "leaseRemaining");
    }
}
