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
 *
 * <p>A number whose key may still be deleted by a copy of a release that is not known to be done
 * (sent more than once, or not answered) is <em>retired</em>: it is not taken again under the same
 * client lease, so that late copy can only ever delete a key of the attempt that sent it. A key
 * names its lease, so the number is free again under the next lease; {@link #dropRetired(long)}
 * forgets what was retired under a lease that ended.
 */
final class KeySlots {
    private final Map<LockKey, Numbers> taken = new ConcurrentHashMap<>();

    /** The numbers of one lock: in use by live attempts, and retired under one lease. */
    private static final class Numbers {
        final BitSet inUse = new BitSet();
        BitSet retired;
        long retiredUnder;

        boolean isEmpty() {
            return inUse.isEmpty() && retired == null;
        }
    }

    /** @return the lowest number on {@code key} neither in use nor retired under {@code leaseId}, now in use */
    int take(LockKey key, long leaseId) {
        int[] slot = new int[1];
        taken.compute(key, (k, known) -> {
            Numbers numbers = known == null ? new Numbers() : known;
            if (numbers.retired != null && numbers.retiredUnder != leaseId) {
                numbers.retired = null;
            }
            int next = numbers.inUse.nextClearBit(0);
            while (numbers.retired != null && numbers.retired.get(next)) {
                next = numbers.inUse.nextClearBit(next + 1);
            }
            numbers.inUse.set(next);
            slot[0] = next;
            return numbers;
        });
        return slot[0];
    }

    /** Gives a number back; the lock's entry goes when no number on it is in use or retired. */
    void free(LockKey key, int slot) {
        taken.computeIfPresent(key, (k, numbers) -> {
            numbers.inUse.clear(slot);
            return numbers.isEmpty() ? null : numbers;
        });
    }

    /**
     * Ends the use of a number without giving it back under {@code leaseId}. Numbers retired under an
     * earlier lease of the lock are forgotten: their keys named that lease.
     */
    void retire(LockKey key, int slot, long leaseId) {
        taken.compute(key, (k, known) -> {
            Numbers numbers = known == null ? new Numbers() : known;
            numbers.inUse.clear(slot);
            if (numbers.retired == null || numbers.retiredUnder != leaseId) {
                numbers.retired = new BitSet();
                numbers.retiredUnder = leaseId;
            }
            numbers.retired.set(slot);
            return numbers;
        });
    }

    /** Forgets the numbers retired under a lease that ended: no key naming it can be created again. */
    void dropRetired(long leaseId) {
        for (LockKey key : taken.keySet()) {
            taken.computeIfPresent(key, (k, numbers) -> {
                if (numbers.retired != null && numbers.retiredUnder == leaseId) {
                    numbers.retired = null;
                }
                return numbers.isEmpty() ? null : numbers;
            });
        }
    }

    /** @return how many locks have a number in use or retired (for tests) */
    int locks() {
        return taken.size();
    }
}
