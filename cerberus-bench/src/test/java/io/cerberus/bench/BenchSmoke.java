package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The benchmark runs end to end (briefly, 300 ms cells at T=2, many-names on 1,000 names, async with
 * {@value #WAITERS} waiters, contended-2p with a child JVM per distributed peer, the semaphore workloads where an engine
 * has semaphore peers, 200 locks held for three leases of 1 s; wake-up on Redis) against each real
 * server the bench starts, every peer of every engine; figures are not judged here, but a peer that
 * fails in either JVM or loses a held lock fails the test. The smoke tests are a class per engine family
 * ({@link RedisBenchSmokeTest}, {@link CoordinationBenchSmokeTest}, {@link SqlBenchSmokeTest}); the module runs them
 * in one test JVM (docs/dev/BUILD.md, "Test JVMs": with two, Spring's registry lost held locks to late renewals).
 */
final class BenchSmoke {
    static final List<Integer> THREADS = List.of(2);
    static final Duration CELL = Duration.ofMillis(300);
    static final Duration WARMUP = Duration.ofMillis(100);
    private static final List<String> CELL_WORKLOADS = List.of(
            "uncontended",
            "contended",
            "idempotent",
            "replay",
            "many-names",
            Bench.ASYNC,
            Bench.TWO_PROCESSES,
            "semaphore",
            "semaphore-contended");
    static final int WAITERS = 50;
    static final int NAMES = 1_000;
    private static final int HELD_LOCKS = 200;
    private static final Duration LEASE = Duration.ofSeconds(1);

    private BenchSmoke() {}

    /**
     * Runs every cell workload and the held locks on {@code group}, and checks the results and the report.
     *
     * @return the report's markdown, for the caller's checks of its rows
     */
    static String runAndReport(EngineGroup group) throws Exception {
        List<Bench.Result> results =
                Bench.run(group, THREADS, CELL, WARMUP, CELL_WORKLOADS, NAMES, List.of(WAITERS), BenchProgress.NONE);
        assertThat(results)
                .allSatisfy(
                        result -> assertThat(result.cycles()).as(result.peer()).isPositive());
        assertThat(results)
                .hasSize(3 * group.lockPeers().size()
                        + 2 * group.guardPeers().size()
                        + group.sharedPeers().size()
                        + 2 * group.semaphores().peers().size()
                        + (int) group.lockPeers().keySet().stream()
                                .filter(Bench.WAITER_PEERS::contains)
                                .count());
        assertThat(results)
                .filteredOn(result -> result.workload().equals(Bench.TWO_PROCESSES))
                .hasSize(group.sharedPeers().size())
                .allSatisfy(result -> {
                    // a share is measured for every peer; Cerberus takes turns between processes, so each JVM got the
                    // lock
                    assertThat(result.childShare())
                            .as(result.peer() + ": the child's share of the hand-offs")
                            .isNotNaN()
                            .isBetween(0.0, 1.0);
                    if (result.peer().startsWith("Cerberus")) {
                        assertThat(result.childShare())
                                .as(result.peer() + ": the child's share of the hand-offs")
                                .isStrictlyBetween(0.0, 1.0);
                    }
                });
        assertThat(results)
                .filteredOn(result -> result.workload().equals("many-names"))
                .allSatisfy(result ->
                        assertThat(result.namesTouched()).as(result.peer()).isPositive());
        List<HeldLocks.Result> holds = HeldLocks.run(group, HELD_LOCKS, LEASE);
        assertThat(holds).hasSize(group.holders().size()).allSatisfy(hold -> {
            assertThat(hold.lost())
                    .as(hold.peer() + " locks lost during the hold")
                    .isZero();
            assertThat(hold.releaseFailures())
                    .as(hold.peer() + " releases that failed")
                    .isZero();
        });
        Map<String, String> charts = Report.charts(results, holds, List.of(group), THREADS);
        assertThat(charts)
                .containsKeys(
                        group.engine() + "-uncontended",
                        group.engine() + "-many-names",
                        group.engine() + "-held-locks");
        assertThat(charts.values())
                .allSatisfy(svg -> assertThat(svg).startsWith("<svg").endsWith("</svg>\n"));
        assertThat(charts.get(group.engine() + "-held-locks"))
                .contains(holds.stream().map(HeldLocks.Result::peer).toArray(String[]::new));
        String report = Report.markdown(results, holds, List.of(group), THREADS, CELL, "smoke");
        assertThat(report)
                .contains(
                        "(smoke-" + group.engine() + "-held-locks.svg)",
                        "(smoke-" + group.engine() + "-many-names.svg)",
                        "(smoke-" + group.engine() + "-contended-2p.svg)",
                        ": contended-2p\n",
                        "| 1 + 1 |");
        return report;
    }
}
