package io.cerberus.check.judge;

import io.cerberus.check.log.HoldLog;
import io.cerberus.check.run.CheckWorkerCommand;
import java.util.List;

/**
 * When a lock counts as stuck: a client asked for it (its try ran out of time, logged {@code busy})
 * within {@code afterNanos} before {@code untilNanos}, nobody was granted it in that time, and no
 * server fault was logged in it (a server killed, restarting or failing over makes a lock
 * unavailable for a while: that is measured as the longest time unheld, not called stuck).
 *
 * @param untilNanos when the clients were told to stop
 * @param afterNanos how long without a grant, while asked for, makes a lock stuck
 */
public record Stuck(long untilNanos, long afterNanos) {
    /** No lock is ever called stuck. */
    public static final Stuck NEVER = new Stuck(Long.MAX_VALUE, Long.MAX_VALUE);

    /** @return how long before the stop lock {@code lock} was last granted, if it is stuck; else 0 */
    long nanos(int lock, List<HoldLog.Event> events, long startNanos) {
        if (equals(NEVER) || afterNanos > untilNanos - startNanos) {
            return 0; // too short a run to tell
        }
        long windowStart = untilNanos - afterNanos;
        long lastGrant = startNanos;
        boolean askedInWindow = false;
        for (HoldLog.Event event : events) {
            if (event.kind().equals("FAULT")
                    && event.client().equals("server")
                    && event.nanos() >= windowStart
                    && event.nanos() <= untilNanos) {
                return 0; // the server was down or coming back: unavailable, not stuck
            }
            if (event.nanos() > untilNanos || MutualExclusionJudge.lockOf(event) != lock) {
                continue;
            }
            if (event.kind().equals("ACQ")) {
                lastGrant = Math.max(lastGrant, event.nanos());
            } else if (event.kind().equals("ENGINE")
                    && event.detail().equals(CheckWorkerCommand.BUSY)
                    && event.nanos() >= windowStart) {
                askedInWindow = true;
            }
        }
        return askedInWindow && lastGrant < windowStart ? untilNanos - lastGrant : 0;
    }
}
