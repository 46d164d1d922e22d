package io.cerberus.check.judge;

import io.cerberus.Fence;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The judge of mutual exclusion with fencing: judges a lock check from its event logs and the
 * registers' final states. With
 * {@code --locks N} each lock is judged on its own (its holds, its tokens, its register); the run's
 * figures are the sums over the locks, and the report names the worst lock.
 *
 * <ul>
 *   <li>An <em>overlap</em>: holds of two clients whose intervals (grant to release, loss notice,
 *       kill or end) intersect: both believed they held the lock at once.</li>
 *   <li>A <em>lost update</em>: a register write that a later write from a stale read undid
 *       (writes accepted minus the final value).</li>
 *   <li><em>Tokens backwards</em>: a grant whose fencing token is not larger than an earlier grant's
 *       (lower, or the same again: a token must be strictly larger than every earlier one).</li>
 *   <li>A <em>late grant</em>: such a grant reaching a client that was paused during its acquire
 *       call, none of whose writes the register accepted: the engine's counter did not go
 *       backwards, the grant only reached its holder late (after others), and fencing stopped it.
 *       Counted apart, not as tokens backwards. A grant whose lines a pause delayed is judged at
 *       the time it was in hand: when its acquire line was logged, or, if the client was stopped
 *       when its acquire would have started (it was timed before the pause), when the pause began.
 *       After a {@code switch}, a grant with an older fence (a client not yet switched) is late too.</li>
 *   <li><em>Stale writes stopped</em>: writes the fenced register refused — fencing at work.</li>
 * </ul>
 *
 * The verdict and the report: {@link LockJudgement}.
 */
public final class MutualExclusionJudge implements Judge {
    private final List<Register.State> registers;
    private final List<String> names;
    private final long startNanos;
    private final long endNanos;
    private final Stuck stuck;

    /**
     * @param registers each lock's register at the end, by lock index
     * @param names each lock's name, by lock index
     * @param startNanos when the clients ran
     * @param endNanos when they had stopped
     * @param stuck when a lock counts as stuck
     */
    public MutualExclusionJudge(
            List<Register.State> registers, List<String> names, long startNanos, long endNanos, Stuck stuck) {
        this.registers = List.copyOf(registers);
        this.names = List.copyOf(names);
        this.startNanos = startNanos;
        this.endNanos = endNanos;
        this.stuck = stuck;
    }

    @Override
    public LockJudgement judge(List<HoldLog.Event> events) {
        return judge(events, registers, names, startNanos, endNanos, stuck);
    }

    /** @return the highest token granted before {@code nanos}, from the grants in time order */
    private static long highestBefore(List<long[]> grants, long nanos) {
        for (int i = grants.size() - 1; i >= 0; i--) {
            if (grants.get(i)[0] < nanos) {
                return grants.get(i)[1];
            }
        }
        return Long.MIN_VALUE;
    }

    /** Judges a run on one lock (never stuck). */
    public static LockJudgement judge(
            List<HoldLog.Event> events, Register.State register, long startNanos, long endNanos) {
        return judge(events, List.of(register), List.of("the lock"), startNanos, endNanos, Stuck.NEVER);
    }

    /**
     * Judges a run on several locks, each on its own: a lock's holds, overlaps and tokens are
     * compared with that lock's only, and its lost updates come from its own register.
     *
     * @param events every event of the run, in time order
     * @param registers each lock's register at the end, by lock index
     * @param names each lock's name, by lock index
     */
    public static LockJudgement judge(
            List<HoldLog.Event> events,
            List<Register.State> registers,
            List<String> names,
            long startNanos,
            long endNanos,
            Stuck stuck) {
        List<LockJudgement.Fault> faults = events.stream()
                .filter(event -> event.kind().equals("FAULT"))
                .map(event -> new LockJudgement.Fault(event.client(), event.nanos(), event.detail()))
                .toList();
        // one pass: each lock gets its own events and the run's (faults, renewal rounds, ends), in time order
        List<List<HoldLog.Event>> byLock = new ArrayList<>(registers.size());
        for (int lock = 0; lock < registers.size(); lock++) {
            byLock.add(new ArrayList<>());
        }
        Map<String, Long> lastLine =
                new HashMap<>(); // per process: its last line on any lock, when it was certainly alive
        for (HoldLog.Event event : events) {
            if (!event.kind().equals("FAULT")) {
                lastLine.put(PauseHistory.process(event.client()), event.nanos());
            }
            int lock = lockOf(event);
            if (lock == HoldLog.NO_LOCK) {
                byLock.forEach(own -> own.add(event));
            } else if (lock < byLock.size()) {
                byLock.get(lock).add(event);
            }
        }
        List<LockReport> locks = new ArrayList<>();
        for (int lock = 0; lock < registers.size(); lock++) {
            locks.add(judgeLock(
                    names.get(lock),
                    lock,
                    byLock.get(lock),
                    lastLine,
                    registers.get(lock),
                    startNanos,
                    endNanos,
                    stuck));
        }
        return new LockJudgement(locks, faults, startNanos, endNanos);
    }

    /** @return the lock an event is about; a hold's step logged without one is about lock 0 (a one-lock run) */
    static int lockOf(HoldLog.Event event) {
        if (event.lock() != HoldLog.NO_LOCK) {
            return event.lock();
        }
        return switch (event.kind()) {
            case "ACQ", "READ", "WRITE", "REL", "LOST" -> 0;
            default -> HoldLog.NO_LOCK;
        };
    }

    /** @param lastLine per process, its last line in the whole run: a process killed holding this lock held it until then */
    private static LockReport judgeLock(
            String name,
            int lock,
            List<HoldLog.Event> events,
            Map<String, Long> lastLine,
            Register.State register,
            long startNanos,
            long endNanos,
            Stuck stuck) {
        Map<String, HoldLog.Event> open = new HashMap<>();
        Map<String, String> writes = new HashMap<>();
        List<Hold> holds = new ArrayList<>();
        List<LockJudgement.Fault> faults = new ArrayList<>();
        long tokensBackwards = 0;
        long staleRefused = 0;
        long highest = Long.MIN_VALUE;
        List<long[]> grants = new ArrayList<>(); // {nanos, highest token granted until then}, in time order
        Map<String, PauseHistory.AcquireLine> acquireLines = new HashMap<>();
        List<String> lateCandidates = new ArrayList<>();
        for (HoldLog.Event event : events) {
            String key = event.client() + "/" + event.token();
            switch (event.kind()) {
                case "ACQ" -> {
                    open.put(key, event);
                    if (event.token() >= 0) {
                        if (event.token() <= highest) {
                            PauseHistory.AcquireLine line = acquireLines.getOrDefault(
                                    key, new PauseHistory.AcquireLine(event.nanos(), event.nanos()));
                            long askedAt = line.askedAt();
                            // when the grant was in hand, if a pause delayed this line: its acquire line came before
                            // the
                            // pause; or the client was stopped when its acquire would have started, so it was timed
                            // before
                            long inHand = line.inHand();
                            long stoppedSince = PauseHistory.stoppedSince(faults, event.client(), askedAt);
                            if (stoppedSince >= 0) {
                                inHand = Math.min(inHand, stoppedSince);
                            }
                            boolean inOrder = inHand < event.nanos() && event.token() > highestBefore(grants, inHand);
                            if (!inOrder) {
                                // paused while asking; or, after a switch, granted in an older epoch (on an engine its
                                // client had not left yet): harmless unless a write under it was accepted. The same
                                // epoch with a lower token is the engine's counter going backwards.
                                if (PauseHistory.pausedBetween(faults, event.client(), askedAt, event.nanos())
                                        || Fence.ofLong(event.token()).epoch()
                                                        < Fence.ofLong(highest).epoch()
                                                && faults.stream()
                                                        .anyMatch(fault ->
                                                                fault.kind().startsWith("switch"))) {
                                    lateCandidates.add(key);
                                } else {
                                    tokensBackwards++;
                                }
                            }
                        }
                        highest = Math.max(highest, event.token());
                        grants.add(new long[] {event.nanos(), highest});
                    }
                }
                case "ENGINE" ->
                    PauseHistory.acquireStart(event)
                            .ifPresent(
                                    start -> acquireLines.put(key, new PauseHistory.AcquireLine(start, event.nanos())));
                case "WRITE" -> {
                    writes.merge(key, event.detail(), (a, b) -> a + "," + b);
                    if (event.detail().equals("stale")) {
                        staleRefused++;
                    }
                }
                case "REL", "LOST" ->
                    close(
                            open.remove(key),
                            lock,
                            event.nanos(),
                            event.kind().equals("REL") ? "released" : "lost",
                            writes,
                            holds);
                case "FAULT" -> {
                    faults.add(new LockJudgement.Fault(event.client(), event.nanos(), event.detail()));
                    // holds open at the signal end then; one a loop of it logged after that line (before dying) ends at
                    // the
                    // process's last line: it died after it, before the confirmation, which may come after the next
                    // grant
                    if (event.detail().startsWith("kill")) {
                        closeAll(open, lock, event.client(), event.nanos(), "killed", writes, holds);
                    } else if (event.detail().startsWith("confirmed kill")
                            || event.detail().startsWith("confirmed between-steps: crashed")
                            || event.detail().startsWith(FaultInjector.EXITED)) {
                        closeAll(
                                open,
                                lock,
                                event.client(),
                                lastLine.getOrDefault(event.client(), event.nanos()),
                                "killed",
                                writes,
                                holds);
                    }
                }
                case "END" -> closeAll(open, lock, event.client(), event.nanos(), "stopped", writes, holds);
                case "READ" -> {
                    if (event.detail().equals("stale")) {
                        staleRefused++; // a holder's read refused: its write never came
                    }
                }
                default -> {
                    // the others: for the timeline only
                }
            }
        }
        for (HoldLog.Event still : List.copyOf(open.values())) {
            close(still, lock, endNanos, "run ended", writes, holds);
        }
        holds.sort(Comparator.comparingLong(Hold::startNanos));
        long lateGrants = 0;
        for (String key : lateCandidates) {
            if (holds.stream()
                    .anyMatch(hold -> (hold.client() + "/" + hold.token()).equals(key)
                            && hold.write().contains("ok"))) {
                tokensBackwards++; // a write under it was accepted: not only late
            } else {
                lateGrants++;
            }
        }
        long stuckNanos = stuck.nanos(lock, events, startNanos); // a stuck lock's gap runs to the stop
        return new LockReport(
                name,
                holds,
                overlaps(holds),
                register.accepted() - register.value(),
                tokensBackwards,
                lateGrants,
                staleRefused,
                register.accepted(),
                register.value(),
                Math.max(longestGap(holds, startNanos, endNanos), stuckNanos),
                recoveries(holds, faults),
                stuckNanos);
    }

    private static void close(
            HoldLog.Event acquired, int lock, long nanos, String end, Map<String, String> writes, List<Hold> holds) {
        if (acquired != null) {
            String key = acquired.client() + "/" + acquired.token();
            // removed: a client without fencing tokens (-1) has the same key for each of its holds
            String written = writes.containsKey(key) ? writes.remove(key) : "none";
            holds.add(new Hold(acquired.client(), lock, acquired.token(), acquired.nanos(), nanos, end, written));
        }
    }

    /** Ends every open hold of a process (all its loops): it was killed or stopped. */
    private static void closeAll(
            Map<String, HoldLog.Event> open,
            int lock,
            String process,
            long nanos,
            String end,
            Map<String, String> writes,
            List<Hold> holds) {
        for (HoldLog.Event event : List.copyOf(open.values())) {
            if (PauseHistory.ofProcess(event.client(), process)) {
                open.remove(event.client() + "/" + event.token());
                close(event, lock, nanos, end, writes, holds);
            }
        }
    }

    /** Pairs of holds of different clients that intersect; holds sorted by start. */
    private static List<Hold[]> overlaps(List<Hold> holds) {
        List<Hold[]> pairs = new ArrayList<>();
        for (int i = 0; i < holds.size(); i++) {
            Hold first = holds.get(i);
            for (int j = i + 1; j < holds.size() && holds.get(j).startNanos() < first.endNanos(); j++) {
                Hold second = holds.get(j);
                if (!second.client().equals(first.client()) && first.overlaps(second)) {
                    pairs.add(new Hold[] {first, second});
                }
            }
        }
        return pairs;
    }

    /** The longest time after the first grant during which nobody held the lock. */
    private static long longestGap(List<Hold> holds, long startNanos, long endNanos) {
        if (holds.isEmpty()) {
            return endNanos - startNanos;
        }
        long longest = 0;
        long coveredUntil = holds.get(0).startNanos();
        for (Hold hold : holds) {
            longest = Math.max(longest, hold.startNanos() - coveredUntil);
            coveredUntil = Math.max(coveredUntil, hold.endNanos());
        }
        return longest;
    }

    /** For each kill of a holder of this lock: time from the kill to the lock's next grant to anyone. */
    private static List<Long> recoveries(List<Hold> holds, List<LockJudgement.Fault> faults) {
        List<Long> recoveries = new ArrayList<>();
        Map<String, Boolean> seen = new LinkedHashMap<>();
        for (LockJudgement.Fault fault : faults) {
            if (!fault.kind().startsWith("kill") || seen.put(fault.client() + fault.nanos(), true) != null) {
                continue;
            }
            boolean wasHolding = holds.stream()
                    .anyMatch(
                            h -> h.heldBy(fault.client()) && h.end().equals("killed") && h.endNanos() == fault.nanos());
            if (!wasHolding) {
                continue;
            }
            holds.stream()
                    .filter(h -> h.startNanos() > fault.nanos())
                    .findFirst()
                    .ifPresent(next -> recoveries.add(next.startNanos() - fault.nanos()));
        }
        return recoveries;
    }
}
