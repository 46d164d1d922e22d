package io.cerberus.check.judge;

import io.cerberus.check.log.CheckLocks;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The judge of at most N permit holders ({@code --primitive semaphore}): a semaphore of N permits is N slots, each an
 * exclusive lock with a fenced register of its own (keyed by the slot's fence name), so each slot is judged by
 * {@link MutualExclusionJudge} as a lock (overlaps, lost updates, tokens strictly increasing per slot), and over them:
 *
 * <ul>
 *   <li><em>Writers at once</em>: a writer is a critical section the resource accepted, from its read the slot's
 *       register answered to the sending of its write the register accepted ({@code WRITE ok}; both lines timed
 *       inside the register's own interval, so a pause around the log lines never makes one look longer). Fencing
 *       keeps a slot's writers apart, so more than N at any instant is {@link Verdict#UNSAFE}: more than N
 *       clients acted on the resource at once, whatever they believed.</li>
 *   <li><em>Holders at once</em>: holds as the clients believed them (grant to release, loss notice, kill), as the
 *       lock judge draws them. More than N is a holder paused past its lease, or cut off, that does not know yet:
 *       {@link Verdict#SAFE_WITH_FENCING} when the registers refused its late writes.</li>
 *   <li><em>Stuck</em>: a semaphore asked for at the end and granted to nobody (any slot), as {@link Stuck} says.</li>
 * </ul>
 */
public final class PermitsJudge implements Judge {
    private final List<Register.State> registers;
    private final CheckLocks semaphores;
    private final long startNanos;
    private final long endNanos;
    private final Stuck stuck;

    /**
     * @param registers each slot's register at the end, by unit ({@link CheckLocks#unit})
     * @param semaphores the run's semaphores and their permits
     * @param startNanos when the clients ran
     * @param endNanos when they had stopped
     * @param stuck when a semaphore counts as stuck
     */
    public PermitsJudge(
            List<Register.State> registers, CheckLocks semaphores, long startNanos, long endNanos, Stuck stuck) {
        if (semaphores.permits() < 1 || registers.size() != semaphores.units()) {
            throw new IllegalArgumentException("a permits judge needs a register per slot of semaphores with permits,"
                    + " was " + registers.size() + " registers for " + semaphores);
        }
        this.registers = List.copyOf(registers);
        this.semaphores = semaphores;
        this.startNanos = startNanos;
        this.endNanos = endNanos;
        this.stuck = stuck;
    }

    @Override
    public PermitsJudgement judge(List<HoldLog.Event> events) {
        LockJudgement slots = MutualExclusionJudge.judge(
                events, registers, semaphores.unitNames(), startNanos, endNanos, Stuck.NEVER);
        List<List<Interval>> writers = new ArrayList<>();
        List<List<Interval>> holders = new ArrayList<>();
        for (int i = 0; i < semaphores.count(); i++) {
            writers.add(new ArrayList<>());
            holders.add(new ArrayList<>());
        }
        for (Hold hold : slots.holds()) {
            holders.get(semaphores.lockOf(hold.lock()))
                    .add(new Interval(hold.client(), hold.lock(), hold.token(), hold.startNanos(), hold.endNanos()));
        }
        Map<String, HoldLog.Event> reads = new HashMap<>(); // per client, slot and token: its last read answered
        List<HoldLog.Event> byOwnSemaphore = new ArrayList<>(); // the stuck rule's lines, a semaphore's on its index
        for (HoldLog.Event event : events) {
            int unit = MutualExclusionJudge.lockOf(event);
            if (unit >= semaphores.units()) {
                continue;
            }
            String key = event.client() + "/" + unit + "/" + event.token();
            switch (event.kind()) {
                case "READ" -> {
                    if (event.detail().equals("stale")) {
                        reads.remove(key);
                    } else {
                        reads.put(key, event);
                    }
                }
                case "WRITE" -> {
                    HoldLog.Event read = reads.remove(key);
                    if (read != null && event.detail().equals("ok") && read.nanos() <= event.nanos()) {
                        writers.get(semaphores.lockOf(unit))
                                .add(new Interval(event.client(), unit, event.token(), read.nanos(), event.nanos()));
                    }
                }
                default -> {
                    // the holds come from the slots' judgement
                }
            }
            if (event.kind().equals("ACQ")
                    || event.kind().equals("REL")
                    || event.kind().equals("LOST")
                    || event.kind().equals("ENGINE")
                    || event.kind().equals("FAULT")) {
                byOwnSemaphore.add(
                        unit == HoldLog.NO_LOCK
                                ? event
                                : new HoldLog.Event(
                                        event.kind(),
                                        event.client(),
                                        semaphores.lockOf(unit),
                                        event.token(),
                                        event.nanos(),
                                        event.detail()));
            }
        }
        List<PermitsJudgement.SemaphoreReport> reports = new ArrayList<>();
        for (int i = 0; i < semaphores.count(); i++) {
            reports.add(new PermitsJudgement.SemaphoreReport(
                    semaphores.name(i),
                    peak(writers.get(i)),
                    peak(holders.get(i)),
                    writers.get(i).size(),
                    stuck.nanos(i, byOwnSemaphore, startNanos)));
        }
        return new PermitsJudgement(slots, semaphores, reports);
    }

    /**
     * A time during which a client held a slot (or acted on its register).
     *
     * @param unit the slot's unit
     */
    record Interval(String client, int unit, long token, long startNanos, long endNanos) {}

    /**
     * The most intervals open at once.
     *
     * @param count how many
     * @param atNanos when first
     * @param open those open then
     */
    record Peak(int count, long atNanos, List<Interval> open) {
        static final Peak NONE = new Peak(0, 0, List.of());
    }

    /** @return the most intervals open at one instant; an interval ending when another starts is not open with it */
    static Peak peak(List<Interval> intervals) {
        List<Interval> byStart = new ArrayList<>(intervals);
        byStart.sort(Comparator.comparingLong(Interval::startNanos));
        List<Interval> open = new ArrayList<>();
        Peak peak = Peak.NONE;
        for (Interval next : byStart) {
            open.removeIf(interval -> interval.endNanos() <= next.startNanos());
            open.add(next);
            if (open.size() > peak.count()) {
                peak = new Peak(open.size(), next.startNanos(), List.copyOf(open));
            }
        }
        return peak;
    }
}
