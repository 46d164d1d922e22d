package io.cerberus.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One attempt to hold a lock, identified by its token. The same attempt is passed to every call
 * about it (try, wait, renew, release, abandon), so an engine can keep per-attempt state (a queue
 * entry, a node) keyed by the token, and a retried call with the same token is recognised.
 *
 * @param key the lock
 * @param mode how it is held
 * @param token 128 random bits in hex, unique per attempt; the owner identity checked by renew
 *     and release
 * @param holder a description of the holder for {@code inspect} (pid@host, thread); never used
 *     for ownership
 * @param lease how long the engine keeps the lock without a renewal
 */
public record Acquisition(LockKey key, LockMode mode, String token, String holder, Duration lease) {
    /** Checks for {@code null}. */
    public Acquisition {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(lease, "lease");
    }

    /** @return the first 8 characters of the token, the most that may appear in logs */
    public String shortToken() {
        return token.substring(0, Math.min(8, token.length()));
    }

    @Override
    public String toString() {
        return mode.label() + " '" + key.name() + "' (" + shortToken() + "...)";
    }
}
