package io.cerberus.bench;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The markdown report of a run: per engine, one table per workload, rows by thread count and peer,
 * ratios to the engine's main peer (lock workloads), its main semaphore (semaphore workloads) or to
 * the bare SET NX + SET guard (idempotency workloads); the held-locks and wake-up tables, a row per peer; and the charts
 * of the tables, one SVG per engine and workload, named {@code <prefix>-<engine>-<workload>.svg} and linked under each
 * table.
 */
final class Report {

    private Report() {}

    /**
     * @param chartPrefix the name the charts' files start with (the report's without {@code .md}), or null for no links
     */
    static String markdown(
            List<Bench.Result> results,
            List<HeldLocks.Result> holds,
            List<EngineGroup> groups,
            List<Integer> threads,
            Duration seconds,
            String chartPrefix) {
        StringBuilder out = new StringBuilder();
        out.append("Servers: ")
                .append(String.join(
                        "; ", groups.stream().map(EngineGroup::server).toList()))
                .append(". JVM: ")
                .append(System.getProperty("java.vm.name"))
                .append(' ')
                .append(System.getProperty("java.version"))
                .append("; ")
                .append(Runtime.getRuntime().availableProcessors())
                .append(" cores; ")
                .append(seconds.toMillis() / 1000.0)
                .append(" s per cell after warm-up.\n\n");
        for (EngineGroup group : groups) {
            List<Bench.Result> ofGroup = results.stream()
                    .filter(r -> r.engine().equals(group.engine()))
                    .toList();
            for (String workload :
                    ofGroup.stream().map(Bench.Result::workload).distinct().toList()) {
                List<Bench.Result> rows = ofGroup.stream()
                        .filter(r -> r.workload().equals(workload))
                        .toList();
                if (workload.equals(Bench.WAKE_UP)) {
                    wakeUpTable(out, group, rows);
                    chartLink(out, chartPrefix, group, workload, "wake-up p50 and p99");
                } else {
                    table(out, group, workload, rows);
                    chartLink(out, chartPrefix, group, workload, "cycles/s by " + countedBy(workload));
                }
            }
            List<HeldLocks.Result> held = holds.stream()
                    .filter(r -> r.engine().equals(group.engine()))
                    .toList();
            if (!held.isEmpty()) {
                heldTable(out, group, held);
                chartLink(out, chartPrefix, group, Bench.HELD_LOCKS, "renewal requests and heap per held lock");
            }
        }
        return out.toString();
    }

    /** @return the SVG charts of the tables, by {@code <engine>-<workload>} */
    static Map<String, String> charts(
            List<Bench.Result> results, List<HeldLocks.Result> holds, List<EngineGroup> groups, List<Integer> threads) {
        Map<String, String> charts = new LinkedHashMap<>();
        for (EngineGroup group : groups) {
            List<Bench.Result> ofGroup = results.stream()
                    .filter(r -> r.engine().equals(group.engine()))
                    .toList();
            for (String workload :
                    ofGroup.stream().map(Bench.Result::workload).distinct().toList()) {
                List<Bench.Result> rows = ofGroup.stream()
                        .filter(r -> r.workload().equals(workload))
                        .toList();
                if (workload.equals(Bench.WAKE_UP)) {
                    Map<String, Double> p50 = new LinkedHashMap<>();
                    Map<String, Double> p99 = new LinkedHashMap<>();
                    for (Bench.Result r : rows) {
                        p50.put(r.peer(), r.p50() / 1000.0);
                        p99.put(r.peer(), r.p99() / 1000.0);
                    }
                    Map<String, Map<String, Double>> panels = new LinkedHashMap<>();
                    panels.put("wake-up p50, µs (from the release to the other client's grant)", p50);
                    panels.put("wake-up p99, µs", p99);
                    charts.put(
                            group.engine() + "-" + workload,
                            Charts.bars(group.title() + ": " + workload + ", one waiter on another client", panels));
                    continue;
                }
                List<Integer> counts = counts(rows);
                Map<String, double[]> series = new LinkedHashMap<>();
                for (Bench.Result r : rows) {
                    series.computeIfAbsent(r.peer(), peer -> new double[counts.size()])[counts.indexOf(r.threads())] =
                            r.perSecond();
                }
                charts.put(
                        group.engine() + "-" + workload,
                        Charts.lines(
                                group.title() + ": " + workload + ", cycles/s by " + countedBy(workload),
                                "cycles/s",
                                counts,
                                series));
            }
            List<HeldLocks.Result> held = holds.stream()
                    .filter(r -> r.engine().equals(group.engine()))
                    .toList();
            if (!held.isEmpty()) {
                Map<String, Double> requests = new LinkedHashMap<>();
                Map<String, Double> heap = new LinkedHashMap<>();
                for (HeldLocks.Result r : held) {
                    String label = r.failed() ? r.peer() + " (LOST " + r.lost() + ")" : r.peer();
                    requests.put(label, r.requestsPerLockPerLease());
                    heap.put(label, r.heapBytesPerLock());
                }
                Map<String, Map<String, Double>> panels = new LinkedHashMap<>();
                panels.put(requestsUnit(group) + " per held lock per lease period", requests);
                panels.put("client heap per held lock, bytes (after GC)", heap);
                HeldLocks.Result first = held.get(0);
                charts.put(
                        group.engine() + "-" + Bench.HELD_LOCKS,
                        Charts.bars(
                                String.format(
                                        Locale.ROOT,
                                        "%s: %,d locks held for %d leases of %s",
                                        group.title(),
                                        first.locks(),
                                        HeldLocks.LEASE_PERIODS,
                                        seconds(first.lease())),
                                panels));
            }
        }
        return charts;
    }

    private static void chartLink(
            StringBuilder out, String chartPrefix, EngineGroup group, String workload, String what) {
        if (chartPrefix != null) {
            out.append("![")
                    .append(group.title())
                    .append(": ")
                    .append(workload)
                    .append(", ")
                    .append(what)
                    .append("](")
                    .append(chartPrefix)
                    .append('-')
                    .append(group.engine())
                    .append('-')
                    .append(workload)
                    .append(".svg)\n\n");
        }
    }

    /**
     * The wake-up table: a row per distributed lock peer, its ratio the baseline's p50 over the peer's, so that above 1
     * the peer wakes its waiter sooner.
     */
    private static void wakeUpTable(StringBuilder out, EngineGroup group, List<Bench.Result> rows) {
        out.append("### ")
                .append(group.title())
                .append(": ")
                .append(Bench.WAKE_UP)
                .append("\n\n");
        out.append(String.format(
                Locale.ROOT,
                "Two clients of the same peer (as two processes have), one name: A holds it, a thread of B asks and"
                        + " blocks; %d ms after B's thread is seen waiting, A releases. Wake-up is from just before A's"
                        + " `unlock()` to the return of B's `lock()`; B then releases, and the next round begins. One"
                        + " waiter (`--threads` is not used); the floors, which cannot wait, are left out. Requests are"
                        + " the whole round's: A's lock and release, B's ask, wait and release. A peer that polls every"
                        + " P starts polling when B asks, so it shows about P − %d ms.%n%n",
                WakeUp.SETTLE.toMillis(),
                WakeUp.SETTLE.toMillis()));
        out.append("| peer | rounds | vs ")
                .append(group.baselineShort())
                .append(" (its p50 / this p50: above 1 wakes sooner) | wake-up p50 | p99 | max | ")
                .append(group.requestsColumn().replace(" per cycle", " per round"))
                .append(" |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        Optional<Bench.Result> baseline =
                rows.stream().filter(r -> r.peer().equals(group.baseline())).findFirst();
        for (Bench.Result r : rows) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %,d | %s | %s | %s | %s | %s |%n",
                    r.peer(),
                    r.cycles(),
                    baseline.map(b -> wakeUpRatio(r, b)).orElse("–"),
                    micros(r.p50()),
                    micros(r.p99()),
                    micros(r.max()),
                    Double.isNaN(r.requestsPerCycle())
                            ? "–"
                            : String.format(Locale.ROOT, "%.1f", r.requestsPerCycle())));
        }
        out.append('\n');
    }

    /** @return the baseline's wake-up p50 over the peer's: above 1, the peer wakes its waiter sooner */
    static String wakeUpRatio(Bench.Result r, Bench.Result baseline) {
        return String.format(Locale.ROOT, "%.2f×", (double) baseline.p50() / Math.max(1, r.p50()));
    }

    private static void heldTable(StringBuilder out, EngineGroup group, List<HeldLocks.Result> rows) {
        HeldLocks.Result first = rows.get(0);
        out.append("### ")
                .append(group.title())
                .append(": ")
                .append(Bench.HELD_LOCKS)
                .append("\n\n");
        out.append(String.format(
                Locale.ROOT,
                "%,d locks of distinct names held by one client for %d lease periods of %s; requests are %s,"
                        + " over the hold.%n%n",
                first.locks(),
                HeldLocks.LEASE_PERIODS,
                seconds(first.lease()),
                requestsUnit(group)));
        out.append(
                "| peer | keeps a held lock by | locks taken in | hold | requests over the hold | per lock per lease period |"
                        + " client heap per held lock | locks lost | failed releases |\n");
        out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (HeldLocks.Result r : rows) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %.1f s | %.1f s | %s | %s | %,.0f B | %s | %s |%n",
                    r.peer(),
                    r.renewal(),
                    r.acquireSeconds(),
                    r.holdSeconds(),
                    Double.isNaN(r.requests()) ? "–" : String.format(Locale.ROOT, "%,.0f", r.requests()),
                    Double.isNaN(r.requests()) ? "–" : String.format(Locale.ROOT, "%.3f", r.requestsPerLockPerLease()),
                    r.heapBytesPerLock(),
                    r.lost() > 0 ? "**" + r.lost() + "**" : "0",
                    r.releaseFailures() > 0 ? "**" + r.releaseFailures() + "**" : "0"));
        }
        out.append('\n');
    }

    /** @return the unit of the group's request count, from its column heading ("Redis commands run per cycle (...)" → "Redis commands run (...)") */
    private static String requestsUnit(EngineGroup group) {
        return group.requestsColumn().replace(" per cycle", "");
    }

    private static String seconds(Duration duration) {
        return String.format(
                Locale.ROOT,
                "%s s",
                duration.toMillis() % 1000 == 0
                        ? Long.toString(duration.toSeconds())
                        : Double.toString(duration.toMillis() / 1000.0));
    }

    /** @return the thread or waiter counts of a table's rows, ascending */
    private static List<Integer> counts(List<Bench.Result> rows) {
        return rows.stream().map(Bench.Result::threads).distinct().sorted().toList();
    }

    /** @return what a workload's cells are counted by: threads, or waiters */
    private static String countedBy(String workload) {
        return Bench.WAITER_WORKLOADS.contains(workload) ? "waiters" : "threads";
    }

    private static void table(StringBuilder out, EngineGroup group, String workload, List<Bench.Result> rows) {
        boolean guard = Bench.GUARD_WORKLOADS.contains(workload);
        boolean residue = workload.equals("many-names");
        boolean twoProcesses = workload.equals(Bench.TWO_PROCESSES);
        boolean semaphore = Bench.SEMAPHORE_WORKLOADS.contains(workload);
        String baselineName =
                guard ? Peers.FLOOR_GUARD : semaphore ? group.semaphores().baseline() : group.baseline();
        String baselineShort =
                guard ? "the floor" : semaphore ? group.semaphores().baselineShort() : group.baselineShort();
        out.append("### ").append(group.title()).append(": ").append(workload).append("\n\n");
        if (twoProcesses) {
            out.append(
                    "T threads on one name, split over two JVMs: this one runs ⌈T/2⌉, a child JVM ⌊T/2⌋ of the same peer against the"
                            + " same server (T=1 is not run). Cycles/s (hand-offs), latencies and client CPU are of both JVMs; the request count is"
                            + " the server's, so it covers both.\n\n");
        }
        if (workload.equals(Bench.ASYNC)) {
            out.append(String.format(
                    Locale.ROOT,
                    "N async waiters, no thread each, over %d names; a waiter asks, checks the hold is alone (and its fencing"
                            + " token above the name's last), releases, and asks again once the release is answered. Cerberus:"
                            + " `acquireAsync` and `Lease.releaseAsync`; Redisson: `RLock.lockAsync(threadId)` and"
                            + " `unlockAsync(threadId)`, the waiter's number as the thread id. Cycles/s are hand-offs, until the"
                            + " last queued waiter released; acquire latency is from asking to the grant.%n%n",
                    AsyncWaiters.NAMES));
        }
        if (semaphore) {
            out.append(String.format(
                    Locale.ROOT,
                    "T threads share one semaphore of %s; a cycle takes one permit and gives it back (cycles/s are"
                            + " permits/s; latency is the wait for a permit), each hold checked to be among at most the"
                            + " permits. Cerberus: `semaphore(name, N).acquire(1, wait)`, renewed, 30 s lease; %s.%n%n",
                    !workload.equals("semaphore")
                            ? Bench.CONTENDED_PERMITS + " permits"
                            : Bench.SEMAPHORE_PERMITS > 0
                                    ? Bench.SEMAPHORE_PERMITS + " permits (nobody waits)"
                                    : "T permits (nobody waits)",
                    group.engine().equals("redis")
                            ? "Redisson: `trySetPermits(N)` once, then `RPermitExpirableSemaphore.acquire(30 s lease)` and"
                                    + " `release(id)`, or `RSemaphore.acquire()` and `release()`"
                            : "Curator: `InterProcessSemaphoreV2.acquire()` and `returnLease(lease)`"));
        }
        if (workload.equals(Bench.VIRTUAL_THREADS)) {
            out.append(String.format(
                    Locale.ROOT,
                    "N virtual threads over %d names with the blocking API (`lock()`, `unlock()`), each hold checked alone.%n%n",
                    AsyncWaiters.NAMES));
        }
        out.append("| peer | ")
                .append(countedBy(workload))
                .append(" | cycles/s | vs ")
                .append(baselineShort)
                .append(" | ")
                .append(guard ? "call" : "acquire")
                .append(" p50 | p99 | p99.9 | max | client CPU per cycle | ")
                .append(group.requestsColumn())
                .append(" |");
        if (residue) {
            String objects =
                    group.residue() == null ? "objects" : group.residue().objects();
            String memory = group.residue() == null ? "memory" : group.residue().memory();
            out.append(" names locked | ")
                    .append(objects)
                    .append(" left after the cell | ")
                    .append(objects)
                    .append(" left per name | ")
                    .append(memory)
                    .append(" growth |");
        }
        if (twoProcesses) {
            out.append(" threads here + child | child's share of the hand-offs |");
        }
        out.append("\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
                .append(residue ? " ---: | ---: | ---: | ---: |" : "")
                .append(twoProcesses ? " ---: | ---: |" : "")
                .append('\n');
        for (int t : counts(rows)) {
            Optional<Bench.Result> baseline = rows.stream()
                    .filter(r -> r.threads() == t && r.peer().equals(baselineName))
                    .findFirst();
            for (Bench.Result r : rows) {
                if (r.threads() != t) {
                    continue;
                }
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %d | %,.0f | %s | %s | %s | %s | %s | %.1f µs | %s |",
                        r.peer(),
                        t,
                        r.perSecond(),
                        baseline.map(b -> ratio(r, b)).orElse("–"),
                        micros(r.p50()),
                        micros(r.p99()),
                        micros(r.p999()),
                        micros(r.max()),
                        r.cpuMicrosPerCycle(),
                        Double.isNaN(r.requestsPerCycle())
                                ? "–"
                                : String.format(Locale.ROOT, "%.2f", r.requestsPerCycle())));
                if (residue) {
                    out.append(String.format(
                            Locale.ROOT,
                            " %,.0f | %s | %s | %s |",
                            r.namesTouched(),
                            count(r.objectsLeft()),
                            Double.isNaN(r.objectsLeft())
                                    ? "–"
                                    : String.format(
                                            Locale.ROOT, "%.2f", r.objectsLeft() / Math.max(1, r.namesTouched())),
                            Double.isNaN(r.bytesLeft()) ? "–" : String.format(Locale.ROOT, "%,.0f B", r.bytesLeft())));
                }
                if (twoProcesses) {
                    out.append(String.format(
                            Locale.ROOT,
                            " %d + %d | %s |",
                            TwoProcessContention.here(t),
                            TwoProcessContention.inChild(t),
                            Double.isNaN(r.childShare())
                                    ? "–"
                                    : String.format(Locale.ROOT, "%.0f%%", 100 * r.childShare())));
                }
                out.append('\n');
            }
        }
        out.append('\n');
    }

    /**
     * @return the ratio of two peers' cycles/s over the cell; when the cell was taken in turns, with the lowest and highest
     *     ratio of their slices round by round in brackets: a round's two slices are next to each other in time, so the spread
     *     of those ratios is how far the machine moved the comparison within the cell
     */
    static String ratio(Bench.Result r, Bench.Result baseline) {
        String whole = String.format(Locale.ROOT, "%.2f×", r.perSecond() / baseline.perSecond());
        if (r == baseline || r.rounds().length < 2 || r.rounds().length != baseline.rounds().length) {
            return whole;
        }
        double low = Double.POSITIVE_INFINITY;
        double high = Double.NEGATIVE_INFINITY;
        for (int round = 0; round < r.rounds().length; round++) {
            double ratio = r.rounds()[round] / baseline.rounds()[round];
            low = Math.min(low, ratio);
            high = Math.max(high, ratio);
        }
        return Double.isFinite(low) && Double.isFinite(high)
                ? whole + String.format(Locale.ROOT, " (%.2f–%.2f)", low, high)
                : whole;
    }

    private static String count(double value) {
        return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%,.0f µs", nanos / 1000.0);
    }
}
