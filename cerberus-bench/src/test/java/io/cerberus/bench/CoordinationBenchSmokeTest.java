package io.cerberus.bench;

import static io.cerberus.bench.BenchSmoke.runAndReport;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The bench's smoke run on ZooKeeper and etcd (see {@link BenchSmoke}): every peer completes cycles.
 */
class CoordinationBenchSmokeTest {
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
}
