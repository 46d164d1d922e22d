package io.cerberus.check.judge;

import io.cerberus.check.log.HoldLog;
import java.util.List;

/**
 * A judge of one property of a run. A run only leaves logs behind: every client's event log and the
 * fault log (and whatever the property's own witness is: the fenced registers, the effect ledger),
 * and a judge reads them after the run, never during it. Each property is one implementation:
 * {@link MutualExclusionJudge} (at most one holder, fencing stops the stale writes),
 * {@link PermitsJudge} (at most N writers at once on a semaphore of N permits, each slot a lock) and
 * {@link IdempotencyJudge} (each operation's effect once). A new property (no stale write accepted
 * by a fenced store) is a new judge, not a branch in one of these; each has a negative control that
 * must come out {@link Verdict#UNSAFE}.
 *
 * <p>A judge is built with what its property needs besides the events (the witness read at the end,
 * the run's times, its settings), so that judging is one call over the events.
 */
public interface Judge {
    /**
     * @param events every event of the run (the clients' logs and the fault log), in time order
     * @return what the logs show
     */
    Judgement judge(List<HoldLog.Event> events);

    /** What a judge found: a verdict, the figures behind it, and the report that shows them. */
    interface Judgement {
        /** @return the verdict */
        Verdict outcome();

        /** @return the verdict's name, as the report shows it */
        default String verdict() {
            return outcome().name();
        }

        /**
         * @param title the run's first line (what ran, where, with which faults)
         * @return the report: the title, the verdict, then the figures, one per line
         */
        String text(String title);
    }
}
