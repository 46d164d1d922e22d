package io.cerberus.check.judge;

import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.log.EffectLedger;
import io.cerberus.check.log.HoldLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The judge of exactly-once effects: judges a run of {@code cerberus check --idempotency} from the clients' event logs, the fault log
 * and the {@link EffectLedger}.
 *
 * <p>The ledger is the truth: every line is an effect applied. A key's effects beyond its first are
 * <b>duplicates</b>. The guard has no fencing token for the effect, so it cannot stop every
 * duplicate: an attempt that applied its effect and then could not complete (killed before its
 * completion reached the store, paused past its lease, cut off from the store, or the store was down
 * meanwhile) leaves its key to be claimed again after the lease — the documented "a crashed
 * attempt's key is free again after the lease". Such an attempt is a <b>dropout</b>: an attempt with
 * an effect in the ledger and no {@code COMPLETED} in its log. A duplicate is <b>explained</b> when
 * a dropout of its key met one of those faults between its claim and its end (for a pause: one at
 * least two thirds of the lease long, as the guard renews every third of the lease); it is
 * <b>unexplained</b> when a dropout met no fault, or when the key was completed twice (a second
 * attempt claimed a key whose result was already stored — with a restarted store in between, that
 * store forgot it). Unexplained duplicates are counted before explained ones, so a key with one
 * unexplained reason counts as unexplained.
 *
 * <p>Also: an acknowledgement (executed or replayed) whose result names an effect the ledger does not
 * hold (acknowledged, never applied); a submission with another payload whose effect was applied
 * (mismatch applied). Verdict: {@code UNSAFE} for any of those or an unexplained duplicate;
 * {@code NO_PROGRESS} if no operation was executed; {@code DUPLICATES_EXPLAINED} if every duplicate is
 * explained; else {@code SAFE}.
 */
public final class IdempotencyJudge implements Judge {
    private final List<EffectLedger.Effect> effects;
    private final Duration lease;
    private final boolean forgetsOnRestart;
    private final long endNanos;

    /** A fault on a client (its name) or on the server ({@code server}), from its start to its end. */
    record Fault(String kind, String target, long startNanos, long endNanos) {}

    /** One submission that claimed its key (or ran without a guard). */
    private static final class Attempt {
        final String submission;
        final String client;
        final long key;
        final long claimNanos;
        long endNanos = -1;
        boolean completed;
        long completedNanos;

        Attempt(String submission, String client, long key, long claimNanos) {
            this.submission = submission;
            this.client = client;
            this.key = key;
            this.claimNanos = claimNanos;
        }
    }

    /**
     * @param effects the ledger's lines, in the order applied
     * @param lease the guard's lease
     * @param forgetsOnRestart whether the store may forget records across a restart (Redis without persistence, memcached, H2)
     * @param endNanos the run's end
     */
    public IdempotencyJudge(
            List<EffectLedger.Effect> effects, Duration lease, boolean forgetsOnRestart, long endNanos) {
        this.effects = List.copyOf(effects);
        this.lease = lease;
        this.forgetsOnRestart = forgetsOnRestart;
        this.endNanos = endNanos;
    }

    /** Judges a run; see {@link #IdempotencyJudge}. */
    public static IdempotencyReport judge(
            List<HoldLog.Event> events,
            List<EffectLedger.Effect> effects,
            Duration lease,
            boolean forgetsOnRestart,
            long endNanos) {
        return new IdempotencyJudge(effects, lease, forgetsOnRestart, endNanos).judge(events);
    }

    @Override
    public IdempotencyReport judge(List<HoldLog.Event> events) {
        Map<String, Attempt> attempts = new HashMap<>();
        List<Fault> faults = new ArrayList<>();
        Map<String, Long> open = new HashMap<>();
        Map<String, Integer> faultCounts = new TreeMap<>();
        Map<String, Integer> confirmed = new TreeMap<>();
        Map<String, Integer> notConfirmed = new TreeMap<>();
        Map<String, Integer> retries = new TreeMap<>();
        Map<String, Long> firstSubmitted = new HashMap<>();
        Map<Long, Set<String>> results = new HashMap<>();
        List<long[]> restarts = new ArrayList<>();
        long submissions = 0;
        long executed = 0;
        long replays = 0;
        long mismatchesSubmitted = 0;
        long refused = 0;
        long firstPayloadsRefused = 0;
        Set<String> otherPayloads = new HashSet<>();
        Set<String> otherOperations = new HashSet<>();
        long longest = 0;
        Set<String> answered = new HashSet<>();
        Map<Long, Set<String>> applied = new HashMap<>();
        effects.forEach(effect ->
                applied.computeIfAbsent(effect.key(), k -> new HashSet<>()).add(effect.submission()));
        long acknowledgedNeverApplied = 0;
        for (HoldLog.Event event : events) {
            String[] words = event.detail().split(" ");
            String submission = words[0];
            switch (event.kind()) {
                case "SUBMIT" -> {
                    submissions++;
                    firstSubmitted.putIfAbsent(operation(submission), event.nanos());
                    if (words.length > 1 && words[1].equals("other")) {
                        otherPayloads.add(submission);
                        if (otherOperations.add(operation(submission))) {
                            mismatchesSubmitted++;
                        }
                    }
                }
                case "CLAIM" ->
                    attempts.put(submission, new Attempt(submission, event.client(), event.token(), event.nanos()));
                case "COMPLETED" -> {
                    Attempt attempt = attempts.get(submission);
                    if (attempt != null) {
                        attempt.completed = true;
                        attempt.completedNanos = event.nanos();
                        attempt.endNanos = event.nanos();
                    }
                }
                case "COMPLETE_FAILED", "FAILED" -> {
                    Attempt attempt = attempts.get(submission);
                    if (attempt != null) {
                        attempt.endNanos = event.nanos();
                    }
                }
                case "ACK", "REFUSED" -> {
                    if (event.kind().equals("REFUSED")) {
                        if (otherPayloads.contains(submission)) {
                            refused++;
                        } else {
                            firstPayloadsRefused++;
                        }
                    } else {
                        String result = words.length > 2 ? words[2] : "";
                        if (words[1].equals("REPLAYED")) {
                            replays++;
                        } else {
                            executed++;
                        }
                        results.computeIfAbsent(event.token(), k -> new HashSet<>())
                                .add(result);
                        if (!applied.getOrDefault(event.token(), Set.of()).contains(result)) {
                            acknowledgedNeverApplied++;
                        }
                    }
                    Long first = firstSubmitted.get(operation(submission));
                    if (first != null && answered.add(operation(submission))) {
                        longest = Math.max(longest, event.nanos() - first);
                    }
                }
                case "RETRY" -> {
                    retries.merge(words.length > 1 ? words[1] : "?", 1, Integer::sum);
                    Attempt attempt = attempts.get(submission);
                    if (attempt != null && attempt.endNanos < 0) {
                        attempt.endNanos =
                                event.nanos(); // a store error after the claim: the client gave the attempt up
                    }
                }
                case "FAULT" -> fault(event, words, faults, open, faultCounts, confirmed, notConfirmed, restarts);
                default -> {
                    // ENGINE, EFFECT (the ledger is the truth), END
                }
            }
        }
        open.forEach((target, start) ->
                faults.add(new Fault(target.split("/", 2)[0], target.split("/", 2)[1], start, endNanos)));

        Map<String, Integer> explained = new TreeMap<>();
        Map<String, Integer> unexplained = new TreeMap<>();
        List<String> samples = new ArrayList<>();
        Map<Long, List<EffectLedger.Effect>> byKey = new TreeMap<>();
        long mismatchesApplied = 0;
        long mismatchesAppliedAfterRestart = 0;
        for (EffectLedger.Effect effect : effects) {
            if (effect.payload().equals("other")) {
                mismatchesApplied++;
                if (forgetsOnRestart && restarts.stream().anyMatch(restart -> restart[0] < effect.nanos())) {
                    mismatchesAppliedAfterRestart++;
                }
            } else {
                byKey.computeIfAbsent(effect.key(), k -> new ArrayList<>()).add(effect);
            }
        }
        long duplicates = 0;
        for (Map.Entry<Long, List<EffectLedger.Effect>> entry : byKey.entrySet()) {
            int extra = entry.getValue().size() - 1;
            if (extra == 0) {
                continue;
            }
            duplicates += extra;
            List<String> reasonsUnexplained = new ArrayList<>();
            List<String> reasonsExplained = new ArrayList<>();
            List<Attempt> completions = new ArrayList<>();
            for (EffectLedger.Effect effect : entry.getValue()) {
                Attempt attempt = attempts.getOrDefault(
                        effect.submission(),
                        new Attempt(effect.submission(), effect.client(), effect.key(), effect.nanos()));
                if (attempt.completed) {
                    completions.add(attempt);
                    continue;
                }
                String why = explanation(attempt, faults, lease, endNanos);
                (why == null ? reasonsUnexplained : reasonsExplained).add(why == null ? "dropout with no fault" : why);
            }
            completions.sort(Comparator.comparingLong(attempt -> attempt.completedNanos));
            for (int i = 1; i < completions.size(); i++) {
                long after = completions.get(i - 1).completedNanos;
                long before = completions.get(i).claimNanos;
                boolean restarted = restarts.stream().anyMatch(restart -> restart[1] > after && restart[0] < before);
                reasonsUnexplained.add(
                        restarted
                                ? (forgetsOnRestart
                                        ? "completed record forgotten by the restarted store"
                                        : "completed record lost across a store restart")
                                : "completed twice");
            }
            int left = extra;
            for (String reason : reasonsUnexplained) {
                if (left-- > 0) {
                    unexplained.merge(reason, 1, Integer::sum);
                }
            }
            for (String reason : reasonsExplained) {
                if (left-- > 0) {
                    explained.merge(reason, 1, Integer::sum);
                }
            }
            if (!reasonsUnexplained.isEmpty() && samples.size() < 5) {
                samples.add("key " + entry.getKey() + ": applied by "
                        + entry.getValue().stream()
                                .map(EffectLedger.Effect::submission)
                                .toList() + ", completed by "
                        + completions.stream()
                                .map(attempt -> attempt.submission)
                                .toList() + ": " + reasonsUnexplained);
            }
        }
        long keysWithTwoResults =
                results.values().stream().filter(set -> set.size() > 1).count();
        Map<String, Integer> inside = new TreeMap<>();
        for (Fault fault : faults) {
            if (!fault.target().equals("server")
                    && attempts.values().stream()
                            .anyMatch(attempt -> attempt.client.equals(fault.target())
                                    && attempt.claimNanos <= fault.startNanos()
                                    && (attempt.endNanos < 0 || attempt.endNanos >= fault.startNanos()))) {
                inside.merge(fault.kind(), 1, Integer::sum);
            }
        }
        long unexplainedCount =
                unexplained.values().stream().mapToLong(Integer::longValue).sum();
        Verdict verdict = unexplainedCount > 0 || mismatchesApplied > 0 || acknowledgedNeverApplied > 0
                ? Verdict.UNSAFE
                : executed == 0 ? Verdict.NO_PROGRESS : duplicates > 0 ? Verdict.DUPLICATES_EXPLAINED : Verdict.SAFE;
        return new IdempotencyReport(
                verdict,
                submissions,
                firstSubmitted.size(),
                executed,
                replays,
                mismatchesSubmitted,
                refused,
                firstPayloadsRefused,
                retries,
                effects.size(),
                byKey.size(),
                duplicates,
                explained,
                unexplained,
                mismatchesApplied,
                mismatchesAppliedAfterRestart,
                acknowledgedNeverApplied,
                keysWithTwoResults,
                longest,
                faultCounts,
                confirmed,
                notConfirmed,
                inside,
                samples);
    }

    /** @return the fault that explains why an attempt that applied its effect did not complete, or null */
    private static String explanation(Attempt attempt, List<Fault> faults, Duration lease, long endNanos) {
        long end = attempt.endNanos >= 0 ? attempt.endNanos : endNanos;
        Map<String, Boolean> found = new LinkedHashMap<>();
        for (Fault fault : faults) {
            boolean overlaps = fault.startNanos() <= end && fault.endNanos() >= attempt.claimNanos;
            boolean onItsClient = fault.target().equals(attempt.client);
            switch (fault.kind()) {
                case "kill" -> {
                    if (onItsClient && fault.startNanos() >= attempt.claimNanos && attempt.endNanos < 0) {
                        found.put("killed before completing", true);
                    }
                }
                case "pause" -> {
                    if (onItsClient && overlaps && fault.endNanos() - fault.startNanos() >= lease.toNanos() * 2 / 3) {
                        found.put("paused past the lease", true);
                    }
                }
                case "partition", "drop", "delay" -> {
                    if (onItsClient && overlaps) {
                        found.put("cut off from the store (" + fault.kind() + ")", true);
                    }
                }
                default -> {
                    if (fault.target().equals("server") && overlaps) {
                        found.put("store down during the attempt (" + fault.kind() + ")", true);
                    }
                }
            }
        }
        return found.isEmpty() ? null : found.keySet().iterator().next();
    }

    private static void fault(
            HoldLog.Event event,
            String[] words,
            List<Fault> faults,
            Map<String, Long> open,
            Map<String, Integer> counts,
            Map<String, Integer> confirmed,
            Map<String, Integer> notConfirmed,
            List<long[]> restarts) {
        String first = words[0].endsWith(":") ? words[0].substring(0, words[0].length() - 1) : words[0];
        if (first.equals("confirmed") || first.equals("unconfirmed")) {
            String kind = words.length > 1 ? words[1].replace(":", "") : "?";
            (first.equals("confirmed") ? confirmed : notConfirmed).merge(kind, 1, Integer::sum);
            return;
        }
        counts.merge(first, 1, Integer::sum);
        String target = event.client();
        switch (first) {
            case "kill", FaultInjector.EXITED ->
                faults.add(new Fault("kill", target, event.nanos(), event.nanos())); // ended unasked: as if killed
            case "pause", "partition", "drop", "delay", "server-kill", "leader-kill", "majority-kill", "failover" ->
                open.put(first + "/" + target, event.nanos());
            case "resume", "heal", "server-restart" -> {
                for (String kind : List.copyOf(open.keySet())) {
                    if (kind.endsWith("/" + target)) {
                        long start = open.remove(kind);
                        faults.add(new Fault(kind.split("/", 2)[0], target, start, event.nanos()));
                        if (first.equals("server-restart")) {
                            restarts.add(new long[] {start, event.nanos()});
                        }
                    }
                }
            }
            default -> {
                // promoted, tilt-wait and the like: steps of a server fault already open
            }
        }
    }

    /** @return the operation a submission belongs to: {@code c1-5} of {@code c1-5.2} */
    private static String operation(String submission) {
        int dot = submission.lastIndexOf('.');
        return dot < 0 ? submission : submission.substring(0, dot);
    }
}
