package io.cerberus.etcd;

import io.cerberus.spi.LockKey;
import java.util.BitSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The numbers in the keys of one client's attempts on each lock: an attempt takes the lowest number
 * no other live attempt of this client on that lock has, and gives it back when it ends. So a lock
 * taken again and again by one client creates the same key again and again.
 *
 * <p>That matters to etcd: a deleted key stays in its in-memory index until the next compaction,
 * and a read of a lock's directory walks every key ever created there since. With a new key per
 * attempt, a busy lock's reads grew with every hold until a compaction (most clusters never compact
 * by default).
 */
final class KeySlots {
    private final Map<LockKey, BitSet> taken = new ConcurrentHashMap<>();

    /** @return the lowest number free on {@code key}, now taken */
    int take(LockKey key) {
        int[] slot = new int[1];
        taken.compute(key, (k, bits) -> {
            BitSet used = bits == null ? new BitSet() : bits;
            slot[0] = used.nextClearBit(0);
            used.set(slot[0]);
            return used;
        });
        return slot[0];
    }

    /** Gives a number back; the lock's entry goes when no number on it is taken. */
    void free(LockKey key, int slot) {
        taken.computeIfPresent(key, (k, bits) -> {
            bits.clear(slot);
            return bits.isEmpty() ? null : bits;
        });
    }

    /** @return how many locks have a number taken (for tests) */
    int locks() {
        return taken.size();
    }
}
