package io.cerberus.bench;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The markdown report of a run: per engine, one table per workload, rows by thread count and peer,
 * ratios to the engine's main peer (lock workloads) or to the bare SET NX + SET guard (idempotency
 * workloads).
 */
final class Report {

    private Report() {
    }

    static String markdown(List<Bench.Result> results, List<EngineGroup> groups, List<Integer> threads, Duration seconds) {
        StringBuilder out = new StringBuilder();
        out.append("Servers: ").append(String.join("; ", groups.stream().map(EngineGroup::server).toList())).append(". JVM: ")
                .append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.version")).append("; ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores; ").append(seconds.toMillis() / 1000.0)
                .append(" s per cell after warm-up.\n\n");
        for (EngineGroup group : groups) {
            List<Bench.Result> ofGroup = results.stream().filter(r -> r.engine().equals(group.engine())).toList();
            for (String workload : ofGroup.stream().map(Bench.Result::workload).distinct().toList()) {
                table(out, group, workload, ofGroup.stream().filter(r -> r.workload().equals(workload)).toList(), threads);
            }
        }
        return out.toString();
    }

    private static void table(StringBuilder out, EngineGroup group, String workload, List<Bench.Result> rows, List<Integer> threads) {
        boolean guard = Bench.GUARD_WORKLOADS.contains(workload);
        String baselineName = guard ? Peers.FLOOR_GUARD : group.baseline();
        out.append("### ").append(group.title()).append(": ").append(workload).append("\n\n");
        out.append("| peer | threads | cycles/s | vs ").append(guard ? "the floor" : group.baselineShort()).append(" | ")
                .append(guard ? "call" : "acquire").append(" p50 | p99 | p99.9 | max | client CPU per cycle | ")
                .append(group.requestsColumn()).append(" |\n");
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int t : threads) {
            Optional<Bench.Result> baseline = rows.stream().filter(r -> r.threads() == t && r.peer().equals(baselineName)).findFirst();
            for (Bench.Result r : rows) {
                if (r.threads() != t) {
                    continue;
                }
                out.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %s | %s | %s | %s | %s | %.1f µs | %s |%n", r.peer(), t,
                        r.perSecond(), baseline.map(b -> String.format(Locale.ROOT, "%.2f×", r.perSecond() / b.perSecond())).orElse("–"),
                        micros(r.p50()), micros(r.p99()), micros(r.p999()), micros(r.max()), r.cpuMicrosPerCycle(),
                        Double.isNaN(r.requestsPerCycle()) ? "–" : String.format(Locale.ROOT, "%.2f", r.requestsPerCycle())));
            }
        }
        out.append('\n');
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%,.0f µs", nanos / 1000.0);
    }
}
