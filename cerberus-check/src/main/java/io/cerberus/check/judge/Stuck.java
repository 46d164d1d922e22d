package io.cerberus.check.judge;

import io.cerberus.check.log.HoldLog;
import io.cerberus.check.run.CheckWorkerCommand;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * When a lock counts as stuck: a client asked for it (its try ran out of time, logged {@code busy})
 * within {@code afterNanos} before {@code untilNanos}, when no hold could explain the refusal, nobody
 * was granted it in that time, and no server fault was logged in it (a server killed, restarting or
 * failing over makes a lock unavailable for a while: that is measured as the longest time unheld,
 * not called stuck).
 *
 * <p>A try explains itself by a hold when a hold of the lock was open while it ran, or ended (released,
 * lost, its process killed or paused) less than {@code refusedForNanos} before it ran out: the try may
 * have begun while the lock was held, and a killed or paused holder's lease runs on after its last line.
 *
 * @param untilNanos when the clients were told to stop
 * @param afterNanos how long without a grant, while asked for, makes a lock stuck
 * @param refusedForNanos how long after a hold ended a try may still have been refused by it: a lease and
 *     a try's wait
 */
public record Stuck(long untilNanos, long afterNanos, long refusedForNanos) {
    /** No lock is ever called stuck. */
    public static final Stuck NEVER = new Stuck(Long.MAX_VALUE, Long.MAX_VALUE, 0);

    /** @return how long before the stop lock {@code lock} was last granted, if it is stuck; else 0 */
    long nanos(int lock, List<HoldLog.Event> events, long startNanos) {
        if (equals(NEVER) || afterNanos > untilNanos - startNanos) {
            return 0; // too short a run to tell
        }
        long windowStart = untilNanos - afterNanos;
        long lastGrant = startNanos;
        long lastEnd = Long.MIN_VALUE; // when a hold of this lock last ended
        Set<String> open = new HashSet<>(); // the holds of this lock not ended yet, as client/token
        boolean askedInWindow = false;
        for (HoldLog.Event event : events) {
            if (event.nanos() > untilNanos) {
                continue;
            }
            if (event.kind().equals("FAULT")) {
                if (event.client().equals("server") && event.nanos() >= windowStart) {
                    return 0; // the server was down or coming back: unavailable, not stuck
                }
                if (open.removeIf(
                        hold -> PauseHistory.ofProcess(hold.substring(0, hold.indexOf('/')), event.client()))) {
                    lastEnd = event.nanos(); // killed or paused while holding: its lease runs out from here
                }
                continue;
            }
            if (MutualExclusionJudge.lockOf(event) != lock) {
                continue;
            }
            String hold = event.client() + "/" + event.token();
            switch (event.kind()) {
                case "ACQ" -> {
                    lastGrant = Math.max(lastGrant, event.nanos());
                    open.add(hold);
                }
                case "REL", "LOST" -> {
                    open.remove(
                            hold); // a paused holder's, removed at its pause, ends here if its lease outlived the pause
                    lastEnd = event.nanos();
                }
                case "ENGINE" -> {
                    if (event.detail().equals(CheckWorkerCommand.BUSY)
                            && event.nanos() >= windowStart
                            && open.isEmpty()
                            && (lastEnd == Long.MIN_VALUE || event.nanos() - lastEnd >= refusedForNanos)) {
                        askedInWindow = true;
                    }
                }
                default -> {
                    // reads and writes say nothing of whether the lock was free
                }
            }
        }
        return askedInWindow && lastGrant < windowStart ? untilNanos - lastGrant : 0;
    }
}
