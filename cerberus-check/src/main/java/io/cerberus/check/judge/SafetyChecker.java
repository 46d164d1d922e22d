package io.cerberus.check.judge;

import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.log.FencedRegister;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.run.CheckWorkerCommand;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Judges a safety-checker run from its event logs and the registers' final states. With
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
 *       when its acquire would have started (it was timed before the pause), when the pause began.</li>
 *   <li><em>Stale writes stopped</em>: writes the fenced register refused — fencing at work.</li>
 * </ul>
 *
 * Verdict: {@code SAFE} (no overlap, nothing lost), {@code SAFE_WITH_FENCING} (holders overlapped
 * but the register refused every stale write), {@code UNSAFE} (lost updates or tokens backwards),
 * {@code NO_PROGRESS} (no hold at all: a run that shows nothing is never called safe).
 */
public final class SafetyChecker {

    /** One hold as the client believed it. */
    public record Hold(String client, int lock, long token, long startNanos, long endNanos, String end, String write) {
        public boolean overlaps(Hold other) {
            return lock == other.lock && startNanos < other.endNanos && other.startNanos < endNanos;
        }

        /** @return whether this hold was made by that process (the client itself, or one of its loops) */
        boolean heldBy(String process) {
            return client.equals(process) || client.startsWith(process + ".");
        }
    }

    /** A fault injected, as logged by the orchestrator. */
    public record Fault(String client, long nanos, String kind) {
    }

    /**
     * A grant's acquire line.
     *
     * @param askedAt when its call started: the line's time less the time the call took
     * @param inHand when the line was written, so when the grant was certainly in hand
     */
    private record AcquireLine(long askedAt, long inHand) {
    }

    /** The judgement of one lock: its holds and what its register ended with. */
    public record LockReport(String name, List<Hold> holds, List<Hold[]> overlaps, long lostUpdates, long tokensBackwards, long lateGrants,
            long staleStopped, long writesAccepted, long finalValue, long longestGapNanos, List<Long> recoveriesNanos,
            long stuckNanos) {

        /** @return whether clients asked for this lock at the end of the run and nobody was granted it */
        boolean stuck() {
            return stuckNanos > 0;
        }

        /** @return how bad this lock's run was: lost updates and tokens backwards first, then overlaps, then the longest gap */
        private static Comparator<LockReport> severity() {
            return Comparator.comparingLong((LockReport lock) -> lock.lostUpdates() + lock.tokensBackwards())
                    .thenComparingInt(lock -> lock.overlaps().size()).thenComparingLong(LockReport::longestGapNanos);
        }
    }

    /** The judgement of a run: each lock's, and the totals over the locks. */
    public record Report(List<LockReport> locks, List<Fault> faults, long startNanos, long endNanos) {

        public String verdict() {
            if (lostUpdates() > 0 || tokensBackwards() > 0) {
                return "UNSAFE";
            }
            if (holds().isEmpty()) {
                return "NO_PROGRESS";
            }
            if (!stuckLocks().isEmpty()) {
                return "STUCK";
            }
            return overlaps().isEmpty() ? "SAFE" : "SAFE_WITH_FENCING";
        }

        /** @return the locks that clients asked for at the end of the run and nobody was granted */
        public List<LockReport> stuckLocks() {
            return locks.stream().filter(LockReport::stuck).toList();
        }

        /** @return every lock's holds, by start */
        public List<Hold> holds() {
            return locks.stream().flatMap(lock -> lock.holds().stream()).sorted(Comparator.comparingLong(Hold::startNanos)).toList();
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
            return locks.stream().flatMap(lock -> lock.recoveriesNanos().stream()).sorted().toList();
        }

        /**
         * @return how many confirmed pauses stopped a client while one of its loops held a lock: the pauses that test
         *     the lease (one that stops a client between two holds tests only its waiting)
         */
        public long pausesOfHolders() {
            List<Hold> holds = holds();
            return faults.stream().filter(fault -> fault.kind().startsWith("confirmed pause"))
                    .filter(pause -> holds.stream().anyMatch(hold -> hold.heldBy(pause.client()) && hold.startNanos() <= pause.nanos()
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
            faults.stream().filter(fault -> !confirmation(fault)).forEach(fault -> counts.merge(kind(fault.kind()), 1, Integer::sum));
            return counts;
        }

        /**
         * @param confirmed true for the faults confirmed, false for those that could not be
         * @return per fault, how many were confirmed (each fault logs {@code confirmed KIND} or {@code unconfirmed KIND};
         *         one confirmed as it is injected — pause, kill, a server fault — stops the run when it cannot be)
         */
        public Map<String, Integer> confirmations(boolean confirmed) {
            Map<String, Integer> counts = new TreeMap<>();
            faults.stream().filter(fault -> fault.kind().startsWith(confirmed ? "confirmed " : "unconfirmed "))
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
    }

    private SafetyChecker() {
    }

    /** @return when the acquire call a worker's {@code acquire Nms} line reports was made */
    private static java.util.Optional<Long> acquireStart(HoldLog.Event event) {
        String detail = event.detail();
        if (!detail.startsWith("acquire ") || !detail.endsWith("ms")) {
            return java.util.Optional.empty();
        }
        try {
            long took = Long.parseLong(detail.substring("acquire ".length(), detail.length() - 2));
            return java.util.Optional.of(event.nanos() - java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(took));
        } catch (NumberFormatException e) {
            return java.util.Optional.empty();
        }
    }

    /** @return whether the client was paused at some moment from {@code from} to {@code to} */
    private static boolean pausedBetween(List<Fault> faults, String client, long from, long to) {
        boolean paused = false;
        for (Fault fault : faults) {
            if (!ofProcess(client, fault.client()) || fault.nanos() > to) {
                continue;
            }
            if (fault.kind().equals("pause") || fault.kind().startsWith("pause ")) {
                paused = true;
                if (fault.nanos() >= from) {
                    return true;
                }
            } else if (fault.kind().equals("resume")) {
                if (paused && fault.nanos() >= from) {
                    return true; // paused before the call, resumed during it
                }
                paused = false;
            }
        }
        return paused;
    }

    /**
     * @return when the client's process was last paused, if it was paused (and not yet resumed) at
     *     {@code at}; -1 if it was running then
     */
    private static long stoppedSince(List<Fault> faults, String client, long at) {
        long since = -1;
        for (Fault fault : faults) {
            if (fault.nanos() > at) {
                break;
            }
            if (!ofProcess(client, fault.client())) {
                continue;
            }
            if (fault.kind().equals("pause") || fault.kind().startsWith("pause ")) {
                since = fault.nanos();
            } else if (fault.kind().equals("resume")) {
                since = -1;
            }
        }
        return since;
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

    /** @return the process of a client ({@code c1} of {@code c1.3}) */
    private static String process(String client) {
        int dot = client.indexOf('.');
        return dot < 0 ? client : client.substring(0, dot);
    }

    /** @return whether the client (a process, or one loop {@code PROCESS.N} of it) belongs to that process */
    private static boolean ofProcess(String client, String process) {
        return process(client).equals(process);
    }

    /** Judges a run on one lock (never stuck). */
    public static Report judge(List<HoldLog.Event> events, FencedRegister.State register, long startNanos, long endNanos) {
        return judge(events, List.of(register), List.of("the lock"), startNanos, endNanos, Stuck.NEVER);
    }

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
        static final Stuck NEVER = new Stuck(Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /**
     * Judges a run on several locks, each on its own: a lock's holds, overlaps and tokens are
     * compared with that lock's only, and its lost updates come from its own register.
     *
     * @param events every event of the run, in time order
     * @param registers each lock's register at the end, by lock index
     * @param names each lock's name, by lock index
     */
    public static Report judge(List<HoldLog.Event> events, List<FencedRegister.State> registers, List<String> names, long startNanos,
            long endNanos, Stuck stuck) {
        List<Fault> faults = events.stream().filter(event -> event.kind().equals("FAULT"))
                .map(event -> new Fault(event.client(), event.nanos(), event.detail())).toList();
        // one pass: each lock gets its own events and the run's (faults, renewal rounds, ends), in time order
        List<List<HoldLog.Event>> byLock = new ArrayList<>(registers.size());
        for (int lock = 0; lock < registers.size(); lock++) {
            byLock.add(new ArrayList<>());
        }
        Map<String, Long> lastLine = new HashMap<>(); // per process: its last line on any lock, when it was certainly alive
        for (HoldLog.Event event : events) {
            if (!event.kind().equals("FAULT")) {
                lastLine.put(process(event.client()), event.nanos());
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
            locks.add(judgeLock(names.get(lock), lock, byLock.get(lock), lastLine, registers.get(lock), startNanos, endNanos, stuck));
        }
        return new Report(locks, faults, startNanos, endNanos);
    }

    /** @return the lock an event is about; a hold's step logged without one is about lock 0 (a one-lock run) */
    private static int lockOf(HoldLog.Event event) {
        if (event.lock() != HoldLog.NO_LOCK) {
            return event.lock();
        }
        return switch (event.kind()) {
            case "ACQ", "READ", "WRITE", "REL", "LOST" -> 0;
            default -> HoldLog.NO_LOCK;
        };
    }

    /** @param lastLine per process, its last line in the whole run: a process killed holding this lock held it until then */
    private static LockReport judgeLock(String name, int lock, List<HoldLog.Event> events, Map<String, Long> lastLine,
            FencedRegister.State register, long startNanos, long endNanos, Stuck stuck) {
        Map<String, HoldLog.Event> open = new HashMap<>();
        Map<String, String> writes = new HashMap<>();
        List<Hold> holds = new ArrayList<>();
        List<Fault> faults = new ArrayList<>();
        long tokensBackwards = 0;
        long highest = Long.MIN_VALUE;
        List<long[]> grants = new ArrayList<>(); // {nanos, highest token granted until then}, in time order
        Map<String, AcquireLine> acquireLines = new HashMap<>();
        List<String> lateCandidates = new ArrayList<>();
        for (HoldLog.Event event : events) {
            String key = event.client() + "/" + event.token();
            switch (event.kind()) {
                case "ACQ" -> {
                    open.put(key, event);
                    if (event.token() >= 0) {
                        if (event.token() <= highest) {
                            AcquireLine line = acquireLines.getOrDefault(key, new AcquireLine(event.nanos(), event.nanos()));
                            long askedAt = line.askedAt();
                            // when the grant was in hand, if a pause delayed this line: its acquire line came before the
                            // pause; or the client was stopped when its acquire would have started, so it was timed before
                            long inHand = line.inHand();
                            long stoppedSince = stoppedSince(faults, event.client(), askedAt);
                            if (stoppedSince >= 0) {
                                inHand = Math.min(inHand, stoppedSince);
                            }
                            boolean inOrder = inHand < event.nanos() && event.token() > highestBefore(grants, inHand);
                            if (!inOrder) {
                                if (pausedBetween(faults, event.client(), askedAt, event.nanos())) {
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
                case "ENGINE" -> acquireStart(event).ifPresent(start -> acquireLines.put(key, new AcquireLine(start, event.nanos())));
                case "WRITE" -> writes.merge(key, event.detail(), (a, b) -> a + "," + b);
                case "REL", "LOST" -> close(open.remove(key), lock, event.nanos(), event.kind().equals("REL") ? "released" : "lost",
                        writes, holds);
                case "FAULT" -> {
                    faults.add(new Fault(event.client(), event.nanos(), event.detail()));
                    // holds open at the signal end then; one a loop of it logged after that line (before dying) ends at the
                    // process's last line: it died after it, before the confirmation, which may come after the next grant
                    if (event.detail().startsWith("kill")) {
                        closeAll(open, lock, event.client(), event.nanos(), "killed", writes, holds);
                    } else if (event.detail().startsWith("confirmed kill") || event.detail().startsWith("confirmed between-steps: crashed")
                            || event.detail().startsWith(FaultInjector.EXITED)) {
                        closeAll(open, lock, event.client(), lastLine.getOrDefault(event.client(), event.nanos()), "killed", writes, holds);
                    }
                }
                case "END" -> closeAll(open, lock, event.client(), event.nanos(), "stopped", writes, holds);
                default -> {
                    // READ: for the timeline only
                }
            }
        }
        for (HoldLog.Event still : List.copyOf(open.values())) {
            close(still, lock, endNanos, "run ended", writes, holds);
        }
        holds.sort(Comparator.comparingLong(Hold::startNanos));
        long lateGrants = 0;
        for (String key : lateCandidates) {
            if (holds.stream().anyMatch(hold -> (hold.client() + "/" + hold.token()).equals(key) && hold.write().contains("ok"))) {
                tokensBackwards++; // a write under it was accepted: not only late
            } else {
                lateGrants++;
            }
        }
        long stuckNanos = stuckFor(lock, events, startNanos, stuck); // a stuck lock's gap runs to the stop
        return new LockReport(name, holds, overlaps(holds), register.accepted() - register.value(), tokensBackwards, lateGrants,
                register.staleRefused(), register.accepted(), register.value(),
                Math.max(longestGap(holds, startNanos, endNanos), stuckNanos), recoveries(holds, faults), stuckNanos);
    }

    /** @return how long before the stop the lock was last granted, if it is stuck; else 0 */
    private static long stuckFor(int lock, List<HoldLog.Event> events, long startNanos, Stuck stuck) {
        if (stuck.equals(Stuck.NEVER) || stuck.afterNanos() > stuck.untilNanos() - startNanos) {
            return 0; // too short a run to tell
        }
        long windowStart = stuck.untilNanos() - stuck.afterNanos();
        long lastGrant = startNanos;
        boolean askedInWindow = false;
        for (HoldLog.Event event : events) {
            if (event.kind().equals("FAULT") && event.client().equals("server") && event.nanos() >= windowStart
                    && event.nanos() <= stuck.untilNanos()) {
                return 0; // the server was down or coming back: unavailable, not stuck
            }
            if (event.nanos() > stuck.untilNanos() || lockOf(event) != lock) {
                continue;
            }
            if (event.kind().equals("ACQ")) {
                lastGrant = Math.max(lastGrant, event.nanos());
            } else if (event.kind().equals("ENGINE") && event.detail().equals(CheckWorkerCommand.BUSY) && event.nanos() >= windowStart) {
                askedInWindow = true;
            }
        }
        return askedInWindow && lastGrant < windowStart ? stuck.untilNanos() - lastGrant : 0;
    }

    private static void close(HoldLog.Event acquired, int lock, long nanos, String end, Map<String, String> writes, List<Hold> holds) {
        if (acquired != null) {
            String key = acquired.client() + "/" + acquired.token();
            // removed: a client without fencing tokens (-1) has the same key for each of its holds
            String written = writes.containsKey(key) ? writes.remove(key) : "none";
            holds.add(new Hold(acquired.client(), lock, acquired.token(), acquired.nanos(), nanos, end, written));
        }
    }

    /** Ends every open hold of a process (all its loops): it was killed or stopped. */
    private static void closeAll(Map<String, HoldLog.Event> open, int lock, String process, long nanos, String end,
            Map<String, String> writes, List<Hold> holds) {
        for (HoldLog.Event event : List.copyOf(open.values())) {
            if (ofProcess(event.client(), process)) {
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
    private static List<Long> recoveries(List<Hold> holds, List<Fault> faults) {
        List<Long> recoveries = new ArrayList<>();
        Map<String, Boolean> seen = new LinkedHashMap<>();
        for (Fault fault : faults) {
            if (!fault.kind().startsWith("kill") || seen.put(fault.client() + fault.nanos(), true) != null) {
                continue;
            }
            boolean wasHolding = holds.stream().anyMatch(h -> h.heldBy(fault.client()) && h.end().equals("killed")
                    && h.endNanos() == fault.nanos());
            if (!wasHolding) {
                continue;
            }
            holds.stream().filter(h -> h.startNanos() > fault.nanos()).findFirst()
                    .ifPresent(next -> recoveries.add(next.startNanos() - fault.nanos()));
        }
        return recoveries;
    }
}
