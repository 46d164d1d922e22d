package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Three etcd members: one leads, a killed leader is replaced, heal brings it back; a killed majority leaves none leading. */
class EtcdClusterTest {
    private static final Duration ELECTION = Timeouts.scaled(Duration.ofSeconds(30));

    @Test
    void oneMemberLeadsAndAKilledLeaderIsReplacedAndHealedBack() {
        try (EtcdCluster cluster = EtcdCluster.start()) {
            assertThat(cluster.uri()).matches("etcd://127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+");
            int leader = cluster.awaitLeader(ELECTION);
            assertThat(cluster.members()).allMatch(EtcdServer::hasLeader);
            cluster.member(leader).ctl("put", "k", "before");

            cluster.member(leader).kill();
            int next = cluster.awaitLeader(ELECTION);
            assertThat(next).isNotEqualTo(leader);
            cluster.member(next).ctl("put", "k", "after");

            cluster.heal();
            assertThat(cluster.member(leader).healthy())
                    .as("the killed leader rejoined")
                    .isTrue();
            assertThat(cluster.member(leader).ctl("get", "k", "--print-value-only"))
                    .isEqualTo("after\n");
        }
    }

    @Test
    void theMemberLeftByAKilledMajorityStopsServingUntilTheMajorityIsRestarted() {
        try (EtcdCluster cluster = EtcdCluster.start()) {
            cluster.awaitLeader(ELECTION);
            assertThat(cluster.majority()).isEqualTo(2);
            assertThatThrownBy(() -> cluster.restart(List.of(0)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("still runs");

            cluster.kill(List.of(0, 1));
            assertThat(cluster.members().subList(0, 2)).noneMatch(EtcdServer::isRunning);
            Await.until(
                    "the member left to stop serving without a quorum",
                    ELECTION,
                    () -> cluster.role(2).isEmpty());

            cluster.restart(List.of(0, 1));
            cluster.awaitLeader(ELECTION);
            assertThat(cluster.members()).allMatch(EtcdServer::healthy);
        }
    }
}
