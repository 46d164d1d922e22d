package io.cerberus.internal;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What one client knows of a semaphore's slots: which of them its own acquisitions hold or are
 * taking, and how many of its threads wait in each slot's line. A hint, never the truth (the engine
 * is): a scan skips the slots this client uses, so its threads never ask the engine for a slot a
 * neighbour holds or is asking for, and a waiter picks the line of a slot held here, which this
 * client's next release hands to it.
 *
 * <p>Invariants: a slot's mark is the id of the acquisition that set it, {@code HANDED}, or 0; an
 * acquisition clears only its own mark, so a mark set by a waiter the slot was handed to survives the
 * old holder's clearing. A holder that lets a slot go while threads here wait for it leaves it
 * {@code HANDED} (its release hands it to the first of them), so a scan does not ask for it meanwhile;
 * the waiter that gets it marks it its own, and a {@code HANDED} slot nobody took is taken by the next
 * waiter here, which chooses marked slots first. Entries live in the client's map while {@code users} (acquisitions under way, and
 * handles not yet closed) is above 0, so a client keeps nothing for a semaphore it no longer uses.
 */
final class LocalSlots {
    private static final AtomicLong IDS = new AtomicLong();
    /** The mark of a slot let go while threads here waited for it. */
    private static final long HANDED = -1;

    private final AtomicLongArray marks;
    private final AtomicIntegerArray waiters;
    /** Guarded by the client's map (changed only in its compute calls). */
    int users;

    LocalSlots(int permits) {
        this.marks = new AtomicLongArray(permits);
        this.waiters = new AtomicIntegerArray(permits);
    }

    /** @return a new acquisition's id, never 0 */
    static long newId() {
        return IDS.incrementAndGet();
    }

    /** @return whether the slot was free of marks here and is now marked by {@code id} */
    boolean mark(int slot, long id) {
        return slot < marks.length() && marks.compareAndSet(slot, 0, id);
    }

    /** Marks a slot this acquisition was granted after waiting for it (handed over, or freed elsewhere). */
    void markGranted(int slot, long id) {
        if (slot < marks.length()) {
            marks.set(slot, id);
        }
    }

    /** Clears the slot's mark if it is still {@code id}'s: to 0, or to {@code HANDED} if threads here wait for it. */
    void clear(int slot, long id) {
        if (slot < marks.length()) {
            marks.compareAndSet(slot, id, waiters.get(slot) > 0 ? HANDED : 0);
        }
    }

    /** Clears the mark of a slot {@code id} asked for and did not get (no hand-off comes of it). */
    void unmark(int slot, long id) {
        if (slot < marks.length()) {
            marks.compareAndSet(slot, id, 0);
        }
    }

    /** @return whether an acquisition of this client holds or takes the slot */
    boolean marked(int slot) {
        return slot < marks.length() && marks.get(slot) != 0;
    }

    /** @return of the given slots, the one marked here with the fewest waiters here, or -1 if none is marked */
    int quietestMarked(Iterable<Integer> slots) {
        int best = -1;
        int fewest = Integer.MAX_VALUE;
        for (int slot : slots) {
            if (marked(slot) && waiters.get(slot) < fewest) {
                best = slot;
                fewest = waiters.get(slot);
            }
        }
        return best;
    }

    void waiting(int slot, int delta) {
        if (slot < waiters.length()) {
            waiters.addAndGet(slot, delta);
        }
    }
}
