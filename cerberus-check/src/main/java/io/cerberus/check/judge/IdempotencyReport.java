package io.cerberus.check.judge;

import io.cerberus.check.fault.FaultInjector;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What an idempotency run showed, as {@link IdempotencyJudge} judged it.
 *
 * @param explained duplicates explained by a fault on a dropout, by kind
 * @param unexplained duplicates no fault on a dropout explains, by reason
 * @param samples a few unexplained duplicates, described
 */
public record IdempotencyReport(
        Verdict outcome,
        long submissions,
        long operations,
        long executed,
        long replays,
        long mismatchesSubmitted,
        long mismatchesRefused,
        long firstPayloadsRefused,
        Map<String, Integer> retries,
        long effects,
        long keys,
        long duplicates,
        Map<String, Integer> explained,
        Map<String, Integer> unexplained,
        long mismatchesApplied,
        long mismatchesAppliedAfterRestart,
        long acknowledgedNeverApplied,
        long keysWithTwoResults,
        long longestUnservedNanos,
        Map<String, Integer> faultCounts,
        Map<String, Integer> confirmed,
        Map<String, Integer> notConfirmed,
        Map<String, Integer> insideAnOperation,
        List<String> samples)
        implements Judge.Judgement {

    long unexplainedCount() {
        return unexplained.values().stream().mapToLong(Integer::longValue).sum();
    }

    @Override
    public String text(String title) {
        StringBuilder out = new StringBuilder();
        out.append(title).append('\n');
        out.append("verdict:                       ").append(verdict()).append('\n');
        out.append("operations:                    ")
                .append(operations)
                .append(" (")
                .append(submissions)
                .append(" submissions, retries included)\n");
        out.append("faults injected:               ")
                .append(FaultInjector.injectedText(faultCounts))
                .append('\n');
        if (!confirmed.isEmpty() || !notConfirmed.isEmpty()) {
            out.append("faults confirmed:              ")
                    .append(FaultInjector.confirmedText(confirmed, notConfirmed))
                    .append('\n');
        }
        if (faultCounts.keySet().stream().anyMatch(FaultInjector.CLIENT_FAULTS::contains)) {
            out.append("client faults in an operation: ")
                    .append(insideAnOperation.isEmpty() ? "none" : insideAnOperation)
                    .append(" (the target had claimed a key and not yet completed or given it up)\n");
        }
        out.append("executed:                      ").append(executed).append(" (acknowledged as run here)\n");
        out.append("replays served:                ").append(replays).append('\n');
        out.append("mismatches refused:            ")
                .append(mismatchesRefused)
                .append(" of ")
                .append(mismatchesSubmitted)
                .append(" operations reusing a key with another payload\n");
        if (firstPayloadsRefused > 0) {
            out.append("first payloads refused:        ")
                    .append(firstPayloadsRefused)
                    .append(" (a key's own payload refused: another payload had run under the key)\n");
        }
        out.append("retries:                       ")
                .append(retries.isEmpty() ? "none" : retries)
                .append('\n');
        out.append("effects applied:               ")
                .append(effects)
                .append(" on ")
                .append(keys)
                .append(" keys\n");
        out.append("duplicates:                    ").append(duplicates).append(" (effects applied more than once)\n");
        out.append("  explained by a fault:        ")
                .append(explained.values().stream().mapToInt(Integer::intValue).sum())
                .append(explained.isEmpty() ? "" : " " + explained)
                .append(" (the first applier could not complete)\n");
        out.append("  unexplained:                 ")
                .append(unexplainedCount())
                .append(unexplained.isEmpty() ? "" : " " + unexplained)
                .append('\n');
        out.append("mismatches applied:            ")
                .append(mismatchesApplied)
                .append(
                        mismatchesAppliedAfterRestart == 0
                                ? ""
                                : " (" + mismatchesAppliedAfterRestart
                                        + " after a store restart, which forgot the key's record)")
                .append('\n');
        out.append("acknowledged, never applied:   ")
                .append(acknowledgedNeverApplied)
                .append('\n');
        out.append("keys answered two results:     ").append(keysWithTwoResults).append('\n');
        out.append("longest wait for an answer:    ")
                .append(String.format(Locale.ROOT, "%.1f ms", longestUnservedNanos / 1e6))
                .append(" (from an operation's first submission to its acknowledgement or refusal)\n");
        samples.forEach(sample -> out.append("  ").append(sample).append('\n'));
        return out.toString();
    }
}
