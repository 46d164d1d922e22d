package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The benchmark runs end to end (briefly, 300 ms cells at T=2) against each real server the bench
 * starts, every peer of every engine; figures are not judged here.
 */
class BenchSmokeTest {
    private static final List<Integer> THREADS = List.of(2);
    private static final Duration CELL = Duration.ofMillis(300);
    private static final Duration WARMUP = Duration.ofMillis(100);
    private static final List<String> ALL_WORKLOADS = List.of("uncontended", "contended", "idempotent", "replay");

    private static String runAndReport(EngineGroup group) throws Exception {
        List<Bench.Result> results = Bench.run(group, THREADS, CELL, WARMUP, ALL_WORKLOADS);
        assertThat(results).allSatisfy(result -> assertThat(result.cycles()).as(result.peer()).isPositive());
        assertThat(results).hasSize(2 * group.lockPeers().size() + 2 * group.guardPeers().size());
        return Report.markdown(results, List.of(group), THREADS, CELL);
    }

    @Test
    void everyRedisPeerCompletesCyclesAndTheReportHasARowEach() throws Exception {
        try (EngineGroup group = EngineGroups.redis(RedisProcess.start(), EngineGroups.PEERS.get("redis"))) {
            assertThat(runAndReport(group)).contains("### Redis: uncontended", "### Redis: contended", "| Cerberus | 2 |",
                    "| Redisson RLock | 2 | ", "1.00×", "### Redis: idempotent", "### Redis: replay", "| Cerberus IdempotencyGuard | 2 |",
                    "| SET NX + SET (floor) | 2 |", "vs the floor", "vs Redisson");
        }
    }

    @Test
    void everyZooKeeperPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.zooKeeper(EngineGroups.PEERS.get("zk"))) {
            assertThat(runAndReport(group)).contains("### ZooKeeper: contended", "| Cerberus | 2 |", "| Curator InterProcessMutex | 2 |",
                    "vs Curator", "1.00×").doesNotContain("idempotent");
        }
    }

    @Test
    void everyEtcdPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.etcd(EngineGroups.PEERS.get("etcd"))) {
            assertThat(runAndReport(group)).contains("### etcd: contended", "| Cerberus | 2 |", "| jetcd Lock | 2 |", "vs jetcd Lock", "1.00×");
        }
    }

    @Test
    void everyPostgresPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.postgres(EngineGroups.PEERS.get("postgres"), 4)) {
            assertThat(runAndReport(group)).contains("### PostgreSQL: contended", "| Cerberus | 2 |", "| Spring JdbcLockRegistry | 2 |",
                    "| ShedLock JDBC (retried at once) | 2 |", "vs JdbcLockRegistry", "1.00×");
        }
    }
}
