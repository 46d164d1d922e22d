package io.cerberus.spi.support;

import io.cerberus.Capability;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/**
 * The simple tier: a plain key-value store with expiring entries, from which
 * {@link KeyValueEngine} builds a full lock engine. A store does five atomic things and nothing of
 * a lock's logic; waiting, reentrancy, renewal and the local line are the core's.
 *
 * <p><b>Contract.</b> Keys and values are arbitrary non-empty Unicode text (a store that limits
 * them maps them, say by hashing a long key); each operation is atomic in the store and called
 * from many threads at once. An entry is gone once its expiry has passed and never before: a store
 * whose clock is coarse rounds an expiry up ({@link #expiryFor}), and a store that may drop entries
 * early (evictions under memory pressure) must be configured not to, or say so in its docs.
 * Failing to reach the store throws {@link io.cerberus.EngineUnavailableException} naming the
 * redacted URI, within the configured timeout; an operation whose answer was lost may have taken
 * effect, and the engine is written so that a repeat is harmless.
 */
public interface KeyValueStore extends AutoCloseable {
    /** The expiry of an entry that lives until it is deleted (an idempotency record kept for ever). */
    Duration FOREVER = ChronoUnit.FOREVER.getDuration();

    /** @return the store's URI without any password, for messages and logs */
    String describe();

    /** @return whether clients in other processes share the store (the engine is then {@link Capability#MULTI_PROCESS}) */
    boolean shared();

    /**
     * The expiry the store sets when asked to keep an entry for {@code lease}: the lease itself,
     * or longer when the store's expiries are coarser (whole seconds, a clock that ticks). The
     * engine reports it as how long a silent holder keeps a lock.
     *
     * @param lease the shortest time the entry must live
     * @return at least {@code lease}
     */
    default Duration expiryFor(Duration lease) {
        return lease;
    }

    /**
     * Stores {@code value} under {@code key} if no entry is there.
     *
     * @param key the key
     * @param value the value
     * @param expiry how long the entry lives, from {@link #expiryFor}, or {@link #FOREVER}
     * @return whether it was stored
     */
    boolean putIfAbsent(String key, String value, Duration expiry);

    /**
     * Replaces the entry under {@code key}, and its expiry, if its value is {@code expected}.
     *
     * @param key the key
     * @param expected the value the entry must have
     * @param value the new value (may equal {@code expected}: only the expiry changes)
     * @param expiry how long the entry lives from now, from {@link #expiryFor}, or {@link #FOREVER}
     * @return whether it was replaced; {@code false} if the entry is gone or has another value
     */
    boolean replaceIfEquals(String key, String expected, String value, Duration expiry);

    /**
     * Deletes the entry under {@code key} if its value is {@code expected}.
     *
     * @param key the key
     * @param expected the value the entry must have
     * @return whether it was deleted
     */
    boolean deleteIfEquals(String key, String expected);

    /**
     * @param key the key
     * @return the value of the live entry under {@code key}, or empty
     */
    Optional<String> get(String key);

    /**
     * @return the longest value the store keeps, in characters (values are ASCII when they are
     *     long: idempotency results are Base64)
     */
    default int maxValueLength() {
        return Integer.MAX_VALUE / 2;
    }

    /**
     * @return the longest expiry (other than {@link #FOREVER}) the store sets, if it has a limit
     */
    default Optional<Duration> longestExpiry() {
        return Optional.empty();
    }

    /**
     * Reads again the settings of the store's servers that weaken a guarantee (a memcached that
     * may evict entries), for the engine's health check ({@link io.cerberus.spi.LockEngine#checkHealth}).
     * The default has none.
     *
     * @return one sentence per such setting, naming the server; empty when there is none
     * @throws io.cerberus.EngineUnavailableException if the store cannot be reached
     */
    default List<String> healthWarnings() {
        return List.of();
    }

    /**
     * Why the engine built on this store lacks a capability, for the exception that refuses it
     * (a store without a {@link FencingCounter} says why its counters could go backwards).
     *
     * @param capability a capability the engine does not have
     * @return one or two sentences, or empty
     */
    default Optional<String> whyNot(Capability capability) {
        return Optional.empty();
    }

    /** Closes the connection. */
    @Override
    void close();
}
