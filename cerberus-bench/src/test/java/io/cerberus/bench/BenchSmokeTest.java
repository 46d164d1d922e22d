package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The benchmark runs end to end (briefly, 300 ms cells at T=2, many-names on 1,000 names, async with
 * {@value #WAITERS} waiters, contended-2p with a child JVM per distributed peer, the semaphore workloads where an engine
 * has semaphore peers, 200 locks held for three leases of 1 s; wake-up on Redis) against each real
 * server the bench starts, every peer of every engine; figures are not judged here, but a peer that
 * fails in either JVM or loses a held lock fails the test.
 */
class BenchSmokeTest {
    private static final List<Integer> THREADS = List.of(2);
    private static final Duration CELL = Duration.ofMillis(300);
    private static final Duration WARMUP = Duration.ofMillis(100);
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
    private static final int WAITERS = 50;
    private static final int NAMES = 1_000;
    private static final int HELD_LOCKS = 200;
    private static final Duration LEASE = Duration.ofSeconds(1);

    private static String runAndReport(EngineGroup group) throws Exception {
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

    @Test
    void everyRedisPeerCompletesCyclesAndTheReportHasARowEach() throws Exception {
        try (EngineGroup group = EngineGroups.redis(RedisProcess.start(), EngineGroups.PEERS.get("redis"))) {
            assertThat(runAndReport(group))
                    .contains(
                            "### Redis: uncontended",
                            "### Redis: contended",
                            "| Cerberus | 2 |",
                            "| Redisson RLock | 2 | ",
                            "1.00×",
                            "### Redis: idempotent",
                            "### Redis: replay",
                            "| Cerberus IdempotencyGuard | 2 |",
                            "| SET NX + SET (floor) | 2 |",
                            "vs the floor",
                            "vs Redisson",
                            "### Redis: many-names",
                            "### Redis: async",
                            "| Redisson RLock | 50 |",
                            "keys left per name",
                            "### Redis: held-locks",
                            "| Redisson RLock | watchdog",
                            "### Redis: semaphore\n",
                            "### Redis: semaphore-contended",
                            "| Redisson RPermitExpirableSemaphore | 2 | ",
                            "| Redisson RSemaphore (permits never expire) | 2 | ",
                            "vs Redisson PES");
        }
    }

    @Test
    void wakeUpOnRedisMeasuresEveryDistributedPeerAndLeavesTheFloorsOut() throws Exception {
        try (EngineGroup group = EngineGroups.redis(RedisProcess.start(), EngineGroups.PEERS.get("redis"))) {
            List<Bench.Result> results = Bench.run(
                    group, THREADS, CELL, WARMUP, List.of(Bench.WAKE_UP), NAMES, List.of(WAITERS), BenchProgress.NONE);
            assertThat(results)
                    .extracting(Bench.Result::peer)
                    .containsExactly("Cerberus", "Redisson RLock", "Redisson RFencedLock", "Spring RedisLockRegistry");
            assertThat(results).allSatisfy(result -> {
                assertThat(result.workload()).isEqualTo(Bench.WAKE_UP);
                assertThat(result.cycles()).as(result.peer() + " rounds").isPositive();
                assertThat(result.p50()).as(result.peer() + " wake-up p50").isPositive();
                assertThat(result.p99()).as(result.peer() + " wake-up p99").isGreaterThanOrEqualTo(result.p50());
                assertThat(result.max()).as(result.peer() + " wake-up max").isGreaterThanOrEqualTo(result.p99());
                assertThat(result.max())
                        .as(result.peer() + " wake-up max, below the wait the workload allows")
                        .isLessThan(WakeUp.MOST_WAKE_UP.toNanos());
                assertThat(result.requestsPerCycle())
                        .as(result.peer() + " Redis commands per round: two locks and two releases at least")
                        .isGreaterThanOrEqualTo(4);
            });
            String report = Report.markdown(results, List.of(), List.of(group), THREADS, CELL, "smoke");
            assertThat(report)
                    .contains(
                            "### Redis: wake-up",
                            "vs Redisson (its p50 / this p50: above 1 wakes sooner)",
                            "| Redisson RLock | ",
                            "| 1.00× |",
                            "(smoke-redis-wake-up.svg)")
                    .doesNotContain("(floor)", "ReentrantLock");
            assertThat(Report.charts(results, List.of(), List.of(group), THREADS))
                    .containsOnlyKeys("redis-wake-up");
        }
    }

    @Test
    void everyZooKeeperPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.zooKeeper(EngineGroups.PEERS.get("zk"))) {
            assertThat(runAndReport(group))
                    .contains(
                            "### ZooKeeper: contended",
                            "| Cerberus | 2 |",
                            "| Curator InterProcessMutex | 2 |",
                            "vs Curator",
                            "1.00×",
                            "### ZooKeeper: many-names",
                            "znodes left per name",
                            "### ZooKeeper: held-locks",
                            "### ZooKeeper: semaphore-contended",
                            "| Curator InterProcessSemaphoreV2 | 2 | ")
                    .doesNotContain("idempotent");
        }
    }

    @Test
    void everyEtcdPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.etcd(EngineGroups.PEERS.get("etcd"))) {
            assertThat(runAndReport(group))
                    .contains(
                            "### etcd: contended", "| Cerberus | 2 |", "| jetcd Lock | 2 |", "vs jetcd Lock", "1.00×");
        }
    }

    @Test
    void everyPostgresPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.postgres(EngineGroups.PEERS.get("postgres"), 4)) {
            assertThat(runAndReport(group))
                    .contains(
                            "### PostgreSQL: contended",
                            "| Cerberus | 2 |",
                            "| Spring JdbcLockRegistry | 2 |",
                            "| ShedLock JDBC (retried at once) | 2 |",
                            "vs JdbcLockRegistry",
                            "1.00×",
                            "### PostgreSQL: many-names",
                            "rows left per name",
                            "### PostgreSQL: held-locks",
                            "| ShedLock JDBC (retried at once) | none");
        }
    }

    @Test
    void everyMariaDbPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.mariaDb(EngineGroups.PEERS.get("mariadb"), 4)) {
            assertThat(runAndReport(group))
                    .contains(
                            "### MariaDB: contended",
                            "| Cerberus | 2 |",
                            "| Cerberus session mode | 2 |",
                            "| Spring JdbcLockRegistry | 2 |",
                            "| ShedLock JDBC (retried at once) | 2 |",
                            "vs JdbcLockRegistry",
                            "1.00×",
                            "MariaDB statements per cycle (Questions)",
                            "### MariaDB: many-names",
                            "rows left per name",
                            "### MariaDB: held-locks");
        }
    }
}
