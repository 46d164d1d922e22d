package io.cerberus.check.judge;

import io.cerberus.check.fault.FaultInjector;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@link MutualExclusionJudge} found in a lock check: each lock's {@link LockReport}, and the
 * totals over the locks; {@link #text} is the report. Verdict: {@code SAFE} (no overlap, nothing
 * lost), {@code SAFE_WITH_FENCING} (holders overlapped but the register refused every stale write),
 * {@code UNSAFE} (lost updates or tokens backwards), {@code NO_PROGRESS} (no hold at all: a run that
 * shows nothing is never called safe), {@code STUCK} (a lock asked for at the end, granted to nobody).
 *
 * @param faults the faults injected, in time order
 */
public record LockJudgement(List<LockReport> locks, List<Fault> faults, long startNanos, long endNanos)
        implements Judge.Judgement {
    /** A fault injected, as logged by the orchestrator. */
    public record Fault(String client, long nanos, String kind) {}

    @Override
    public Verdict outcome() {
        if (lostUpdates() > 0 || tokensBackwards() > 0) {
            return Verdict.UNSAFE;
        }
        if (holds().isEmpty()) {
            return Verdict.NO_PROGRESS;
        }
        if (!stuckLocks().isEmpty()) {
            return Verdict.STUCK;
        }
        return overlaps().isEmpty() ? Verdict.SAFE : Verdict.SAFE_WITH_FENCING;
    }

    /** @return the locks that clients asked for at the end of the run and nobody was granted */
    public List<LockReport> stuckLocks() {
        return locks.stream().filter(LockReport::stuck).toList();
    }

    /** @return every lock's holds, by start */
    public List<Hold> holds() {
        return locks.stream()
                .flatMap(lock -> lock.holds().stream())
                .sorted(Comparator.comparingLong(Hold::startNanos))
                .toList();
    }

    public List<Hold[]> overlaps() {
        return locks.stream().flatMap(lock -> lock.overlaps().stream()).toList();
    }

    public long lostUpdates() {
        return locks.stream().mapToLong(LockReport::lostUpdates).sum();
    }

    public long tokensBackwards() {
        return locks.stream().mapToLong(LockReport::tokensBackwards).sum();
    }

    public long lateGrants() {
        return locks.stream().mapToLong(LockReport::lateGrants).sum();
    }

    public long staleStopped() {
        return locks.stream().mapToLong(LockReport::staleStopped).sum();
    }

    public long writesAccepted() {
        return locks.stream().mapToLong(LockReport::writesAccepted).sum();
    }

    public long finalValue() {
        return locks.stream().mapToLong(LockReport::finalValue).sum();
    }

    /** @return the longest time one lock was held by nobody (the worst lock's) */
    public long longestGapNanos() {
        return locks.stream().mapToLong(LockReport::longestGapNanos).max().orElse(endNanos - startNanos);
    }

    /** @return for each kill of a holder, the time to the next grant of the lock it held */
    public List<Long> recoveriesNanos() {
        return locks.stream()
                .flatMap(lock -> lock.recoveriesNanos().stream())
                .sorted()
                .toList();
    }

    /**
     * @return how many confirmed pauses stopped a client while one of its loops held a lock: the pauses that test
     *     the lease (one that stops a client between two holds tests only its waiting)
     */
    public long pausesOfHolders() {
        List<Hold> holds = holds();
        return faults.stream()
                .filter(fault -> fault.kind().startsWith("confirmed pause"))
                .filter(pause -> holds.stream()
                        .anyMatch(hold -> hold.heldBy(pause.client())
                                && hold.startNanos() <= pause.nanos()
                                && pause.nanos() < hold.endNanos()))
                .count();
    }

    /** @return the lock that fared worst (lost updates and tokens backwards, then overlaps, then the longest gap) */
    public LockReport worst() {
        return locks.stream().max(LockReport.severity()).orElseThrow();
    }

    /** @return how many times each fault and step was logged, confirmations left out */
    public Map<String, Integer> faultCounts() {
        Map<String, Integer> counts = new TreeMap<>();
        faults.stream()
                .filter(fault -> !confirmation(fault))
                .forEach(fault -> counts.merge(kind(fault.kind()), 1, Integer::sum));
        return counts;
    }

    /**
     * @param confirmed true for the faults confirmed, false for those that could not be
     * @return per fault, how many were confirmed (each fault logs {@code confirmed KIND} or {@code unconfirmed KIND};
     *         one confirmed as it is injected — pause, kill, a server fault — stops the run when it cannot be)
     */
    public Map<String, Integer> confirmations(boolean confirmed) {
        Map<String, Integer> counts = new TreeMap<>();
        faults.stream()
                .filter(fault -> fault.kind().startsWith(confirmed ? "confirmed " : "unconfirmed "))
                .forEach(fault -> counts.merge(kind(fault.kind().split(" ", 2)[1]), 1, Integer::sum));
        return counts;
    }

    private static boolean confirmation(Fault fault) {
        return fault.kind().startsWith("confirmed ") || fault.kind().startsWith("unconfirmed ");
    }

    private static String kind(String detail) {
        String first = detail.split(" ", 2)[0];
        return first.endsWith(":") ? first.substring(0, first.length() - 1) : first;
    }

    @Override
    public String text(String title) {
        return text(title, outcome(), "lock", "");
    }

    /**
     * @param verdict the verdict to show (a judge over this judgement's, {@link PermitsJudgement})
     * @param unit what a lock of this judgement is, for people: {@code lock}, or {@code slot}
     * @param figures lines of the judge over this one, shown after the holds
     * @return the report, as {@link #text(String)}
     */
    String text(String title, Verdict verdict, String unit, String figures) {
        StringBuilder out = new StringBuilder();
        out.append(title).append('\n');
        out.append("verdict:               ").append(verdict.name()).append('\n');
        out.append("holds (operations):    ").append(holds().size()).append('\n');
        out.append(figures);
        if (locks().size() > 1) {
            LockReport worst = worst();
            out.append(String.format(Locale.ROOT, "%-23s", unit + "s:"))
                    .append(locks().size())
                    .append(", each judged on its own; worst: ")
                    .append(worst.name())
                    .append(" (")
                    .append(worst.holds().size())
                    .append(" holds, ")
                    .append(worst.overlaps().size())
                    .append(" overlapping, ")
                    .append(worst.lostUpdates())
                    .append(" lost, ")
                    .append(worst.tokensBackwards())
                    .append(" tokens backwards, longest unheld ")
                    .append(millis(worst.longestGapNanos()))
                    .append(")\n");
        }
        out.append("faults injected:       ")
                .append(FaultInjector.injectedText(faultCounts()))
                .append('\n');
        java.util.Map<String, Integer> confirmed = confirmations(true);
        java.util.Map<String, Integer> notConfirmed = confirmations(false);
        if (!confirmed.isEmpty() || !notConfirmed.isEmpty()) {
            out.append("faults confirmed:      ")
                    .append(FaultInjector.confirmedText(confirmed, notConfirmed))
                    .append('\n');
        }
        if (confirmed.containsKey("pause")) {
            out.append("pauses of a holder:    ")
                    .append(pausesOfHolders())
                    .append(" of ")
                    .append(confirmed.get("pause"))
                    .append(" confirmed pauses stopped a client holding a lock\n");
        }
        out.append("overlapping holds:     ")
                .append(overlaps().size())
                .append(" (two clients believed they held the ")
                .append(unit.equals("lock") ? "lock" : "same " + unit)
                .append(" at once)\n");
        out.append("stale writes stopped:  ")
                .append(staleStopped())
                .append(" (refused by the fenced register: fencing at work)\n");
        out.append("lost updates:          ")
                .append(lostUpdates())
                .append(" (")
                .append(writesAccepted())
                .append(" writes accepted, final value ")
                .append(finalValue())
                .append(")\n");
        out.append("tokens backwards:      ").append(tokensBackwards()).append('\n');
        if (lateGrants() > 0) {
            out.append("grants reaching late:  ")
                    .append(lateGrants())
                    .append(" (the client was paused during its acquire, or had not yet left the engine the others"
                            + " switched from; its token was below others' already granted, and fencing refused its"
                            + " writes)\n");
        }
        out.append("longest time unheld:   ").append(millis(longestGapNanos())).append('\n');
        for (LockReport stuck : stuckLocks()) {
            out.append("stuck:                 ")
                    .append(stuck.name())
                    .append(": asked for, and granted to nobody, for the last ")
                    .append(millis(stuck.stuckNanos()))
                    .append(" of the run\n");
        }
        out.append("recovery after a holder was killed: ")
                .append(recoveries(recoveriesNanos()))
                .append('\n');
        int shown = 0;
        for (Hold[] pair : overlaps()) {
            if (shown++ == 5) {
                out.append("  ... and ").append(overlaps().size() - 5).append(" more\n");
                break;
            }
            out.append("  overlap: ")
                    .append(describe(pair[0]))
                    .append(" with ")
                    .append(describe(pair[1]))
                    .append('\n');
        }
        return out.toString();
    }

    private String describe(Hold hold) {
        return hold.client() + on(hold) + " token " + hold.token() + " [" + millis(hold.startNanos() - startNanos())
                + " – " + millis(hold.endNanos() - startNanos()) + ", " + hold.end() + ", write " + hold.writeText()
                + "]";
    }

    /** @return " on NAME" in a run of several locks, else nothing */
    public String on(Hold hold) {
        return locks().size() > 1 ? " on " + locks().get(hold.lock()).name() : "";
    }

    /** @return each time (one per hold a kill ended: a client killed holding three locks counts three), or past 20 their count and spread */
    private static String recoveries(List<Long> sortedNanos) {
        if (sortedNanos.isEmpty()) {
            return "no holder was killed";
        }
        if (sortedNanos.size() <= 20) {
            return sortedNanos.stream().map(LockJudgement::millis).toList().toString();
        }
        int count = sortedNanos.size();
        return count + " holds ended by a kill: min " + millis(sortedNanos.get(0)) + ", median "
                + millis(sortedNanos.get(count / 2)) + ", 99th percentile "
                + millis(sortedNanos.get((int) Math.ceil(count * 0.99) - 1)) + ", max "
                + millis(sortedNanos.get(count - 1));
    }

    /** @return a time in milliseconds, one decimal, for reports */
    public static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
}
