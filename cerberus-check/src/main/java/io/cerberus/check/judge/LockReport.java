package io.cerberus.check.judge;

import java.util.Comparator;
import java.util.List;

/** The judgement of one lock of a lock check: its holds and what its register ended with. */
public record LockReport(
        String name,
        List<Hold> holds,
        List<Hold[]> overlaps,
        long lostUpdates,
        long tokensBackwards,
        long lateGrants,
        long staleStopped,
        long writesAccepted,
        long finalValue,
        long longestGapNanos,
        List<Long> recoveriesNanos,
        long stuckNanos) {

    /** @return whether clients asked for this lock at the end of the run and nobody was granted it */
    boolean stuck() {
        return stuckNanos > 0;
    }

    /** @return how bad this lock's run was: lost updates and tokens backwards first, then overlaps, then the longest gap */
    static Comparator<LockReport> severity() {
        return Comparator.comparingLong((LockReport lock) -> lock.lostUpdates() + lock.tokensBackwards())
                .thenComparingInt(lock -> lock.overlaps().size())
                .thenComparingLong(LockReport::longestGapNanos);
    }
}
