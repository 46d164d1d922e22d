package io.cerberus.jdbc;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The lock rows an engine released lately, to choose how the next release ends a hold: a name released
 * before is likely locked again soon, so its release leaves the row free for the next acquire to take by an
 * update; a name released for the first time (one locked once, as a per-entity name often is) has its row
 * deleted, so it costs the sweep ({@link ExpiredRows}) nothing. Either choice is correct: it only moves cost.
 *
 * <p>A fixed table of {@link #SLOTS} 64-bit fingerprints of row keys, one slot per fingerprint, each written
 * by the latest release that maps to it: bounded memory (128 KB), no lock. Two keys that share a slot forget
 * each other, and a fingerprint shared by two keys (one in 2^64) makes one release free a row it could
 * delete; both are harmless. Thread-safe.
 */
final class RecentReleases {
    /** The table's size: a power of two. */
    static final int SLOTS = 1 << 14;

    private final AtomicLongArray fingerprints = new AtomicLongArray(SLOTS);

    /**
     * Notes a release of {@code key}.
     *
     * @param key a lock row's key: 64 hex digits ({@link LockRows#key})
     * @return whether the key was released before, and not forgotten since
     */
    boolean releasedAgain(String key) {
        long fingerprint = Long.parseUnsignedLong(key.substring(0, 16), 16) | 1; // never 0, an empty slot
        int slot = (int) (fingerprint >>> 1) & (SLOTS - 1);
        return fingerprints.getAndSet(slot, fingerprint) == fingerprint;
    }
}
