package io.cerberus.etcd;

import io.cerberus.spi.Acquisition;
import io.etcd.jetcd.ByteSequence;

/** What the engine knows of one attempt: its key, lease, create revision and whom it waits for. */
final class AttemptState {
    final Acquisition attempt;
    final ByteSequence key;
    final long leaseId;
    /** The attempt's number among this client's attempts on the lock, in its key ({@link KeySlots}). */
    final int slot;

    volatile long createRevision;
    volatile boolean granted;
    /** The key this attempt waits on, its create revision, and the revision of the read that found it. */
    volatile ByteSequence predecessor;

    volatile long predecessorCreateRevision;
    volatile long readRevision;
    /** When the hold's lease runs out without a renewal, in {@link System#nanoTime()} ({@link ExpirySweep}). */
    volatile long expiresAt;

    AttemptState(Acquisition attempt, ByteSequence key, long leaseId, int slot) {
        this.attempt = attempt;
        this.key = key;
        this.leaseId = leaseId;
        this.slot = slot;
    }
}
