package io.cerberus.bench;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The markdown report of a run: one table per workload and thread count, ratios to Redisson (lock
 * workloads) or to the bare SET NX + SET guard (idempotency workloads).
 */
final class Report {
    private static final String BASELINE = "Redisson RLock";

    private Report() {
    }

    static String markdown(List<Bench.Result> results, String server, List<Integer> threads, Duration seconds) {
        StringBuilder out = new StringBuilder();
        out.append("Server: ").append(server).append("; JVM: ").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.version")).append("; ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores; ").append(seconds.toMillis() / 1000.0).append(" s per cell after warm-up.\n\n");
        for (String workload : results.stream().map(Bench.Result::workload).distinct().toList()) {
            out.append("### ").append(workload).append("\n\n");
            String baselineName = Bench.GUARD_WORKLOADS.contains(workload) ? Peers.FLOOR_GUARD : BASELINE;
            String shortName = Bench.GUARD_WORKLOADS.contains(workload) ? "the floor" : "Redisson";
            out.append("| peer | threads | cycles/s | vs " + shortName + " | " + (Bench.GUARD_WORKLOADS.contains(workload) ? "call" : "acquire")
                    + " p50 | p99 | p99.9 | max | client CPU per cycle | Redis commands run per cycle (inside scripts too) |\n");
            out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
            for (int t : threads) {
                Optional<Bench.Result> baseline = results.stream()
                        .filter(r -> r.workload().equals(workload) && r.threads() == t && r.peer().equals(baselineName)).findFirst();
                for (Bench.Result r : results) {
                    if (!r.workload().equals(workload) || r.threads() != t) {
                        continue;
                    }
                    out.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %s | %s | %s | %s | %s | %.1f µs | %s |%n", r.peer(), t,
                            r.perSecond(), baseline.map(b -> String.format(Locale.ROOT, "%.2f×", r.perSecond() / b.perSecond())).orElse("–"),
                            micros(r.p50()), micros(r.p99()), micros(r.p999()), micros(r.max()), r.cpuMicrosPerCycle(),
                            r.peer().startsWith("ReentrantLock") ? "–" : String.format(Locale.ROOT, "%.2f", r.commandsPerCycle())));
                }
            }
            out.append('\n');
        }
        return out.toString();
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%,.0f µs", nanos / 1000.0);
    }
}
