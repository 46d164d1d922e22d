package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Needs redis-server and redis-cli installed. One cluster: creating one takes seconds. */
class RedisClusterTest {

    @Test
    void aKilledMasterIsFailedOverAndRejoinsAsAReplicaWhenHealed() {
        try (RedisCluster cluster = RedisCluster.builder().start()) {
            assertThat(cluster.nodes()).hasSize(6);
            assertThat(cluster.uri())
                    .isEqualTo("redis-cluster://" + cluster.nodes().get(0).hostPort() + ","
                            + cluster.nodes().get(1).hostPort());
            assertThat(cluster.masterOf(0)).isPresent();
            assertThat(cluster.masterOf(16_383)).isPresent();
            assertThatThrownBy(() -> cluster.masterOf(16_384))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("0 to 16383");

            RedisServer master = cluster.masterOf(0).orElseThrow();
            master.kill();
            Await.until(
                    "a replica to take over slot 0",
                    Timeouts.scaled(Duration.ofSeconds(30)),
                    () -> cluster.masterOf(0).filter(now -> now != master).isPresent());
            cluster.heal();
            assertThat(master.isRunning()).isTrue();
            assertThat(RespQuery.text(master.port(), "INFO", "replication")).contains("role:slave");
            assertThat(cluster.nodes())
                    .allSatisfy(node -> assertThat(RespQuery.text(node.port(), "CLUSTER", "INFO"))
                            .contains("cluster_state:ok"));
        }
    }

    @Test
    void aClusterHasAtLeastThreeMasters() {
        assertThatThrownBy(() -> RedisCluster.builder().masters(2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 3 masters");
    }
}
