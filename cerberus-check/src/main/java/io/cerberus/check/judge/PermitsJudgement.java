package io.cerberus.check.judge;

import io.cerberus.check.log.CheckLocks;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What {@link PermitsJudge} found in a semaphore check: each slot's judgement as a lock ({@link #slots}), and per
 * semaphore the most writers and holders at once. Verdict: {@code UNSAFE} (lost updates or tokens backwards in a slot,
 * or more writers at once than permits), {@code NO_PROGRESS} (no hold), {@code STUCK} (a semaphore asked for at the end,
 * granted to nobody), {@code SAFE_WITH_FENCING} (two holders of a slot at once, or more holders than permits, but the
 * registers refused every late write), else {@code SAFE}.
 *
 * @param slots each slot judged as a lock, by unit
 * @param semaphores the run's semaphores and their permits
 * @param reports per semaphore, by index
 */
public record PermitsJudgement(LockJudgement slots, CheckLocks semaphores, List<SemaphoreReport> reports)
        implements Judge.Judgement {

    /**
     * One semaphore's figures over its slots.
     *
     * @param writers the most critical sections the registers accepted at one instant (read to write)
     * @param holders the most holds at one instant, as the clients believed them
     * @param sections the critical sections the registers accepted
     * @param stuckNanos how long before the stop it was last granted, if it is stuck; else 0
     */
    public record SemaphoreReport(
            String name, PermitsJudge.Peak writers, PermitsJudge.Peak holders, int sections, long stuckNanos) {}

    @Override
    public Verdict outcome() {
        if (slots.lostUpdates() > 0 || slots.tokensBackwards() > 0 || mostWriters() > semaphores.permits()) {
            return Verdict.UNSAFE;
        }
        if (slots.holds().isEmpty()) {
            return Verdict.NO_PROGRESS;
        }
        if (reports.stream().anyMatch(report -> report.stuckNanos() > 0)) {
            return Verdict.STUCK;
        }
        return slots.overlaps().isEmpty() && mostHolders() <= semaphores.permits()
                ? Verdict.SAFE
                : Verdict.SAFE_WITH_FENCING;
    }

    /** @return the most writers at one instant on one semaphore (the worst one's) */
    public int mostWriters() {
        return reports.stream()
                .mapToInt(report -> report.writers().count())
                .max()
                .orElse(0);
    }

    /** @return the most holders at one instant on one semaphore (the worst one's), as the clients believed */
    public int mostHolders() {
        return reports.stream()
                .mapToInt(report -> report.holders().count())
                .max()
                .orElse(0);
    }

    @Override
    public String text(String title) {
        int permits = semaphores.permits();
        SemaphoreReport worst = reports.stream()
                .max(Comparator.comparingInt(
                                (SemaphoreReport report) -> report.writers().count())
                        .thenComparingInt(report -> report.holders().count()))
                .orElseThrow();
        String on = reports.size() > 1 ? " on " + worst.name() : "";
        StringBuilder figures = new StringBuilder();
        figures.append("permits:               ")
                .append(permits)
                .append(reports.size() > 1 ? " per semaphore (" + reports.size() + " semaphores)" : "")
                .append(", each slot judged as a lock (its holds, tokens and register, by its fence name)\n");
        figures.append("most writers at once:  ")
                .append(worst.writers().count())
                .append(" of ")
                .append(permits)
                .append(permits == 1 ? " permit" : " permits")
                .append(on)
                .append(" (critical sections the fenced registers accepted, read to write; ")
                .append(reports.stream().mapToInt(SemaphoreReport::sections).sum())
                .append(" in all)\n");
        if (worst.writers().count() > permits) {
            figures.append("  more writers than permits at ")
                    .append(LockJudgement.millis(worst.writers().atNanos() - slots.startNanos()))
                    .append(": ")
                    .append(describe(worst.writers().open()))
                    .append('\n');
        }
        figures.append("most holders at once:  ")
                .append(mostHolders())
                .append(" (as the clients believed: a holder paused past its lease counts until it learns)\n");
        for (SemaphoreReport report : reports) {
            if (report.stuckNanos() > 0) {
                figures.append("stuck:                 ")
                        .append(report.name())
                        .append(": asked for, and no permit granted to anybody, for the last ")
                        .append(LockJudgement.millis(report.stuckNanos()))
                        .append(" of the run\n");
            }
        }
        return slots.text(title, outcome(), "slot", figures.toString());
    }

    private String describe(List<PermitsJudge.Interval> open) {
        return open.stream()
                .map(section ->
                        section.client() + " " + semaphores.unitName(section.unit()) + " token " + section.token())
                .collect(Collectors.joining(", "));
    }
}
