package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Three etcd members: one leads, a killed leader is replaced, heal brings it back. */
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
            assertThat(cluster.member(leader).healthy()).as("the killed leader rejoined").isTrue();
            assertThat(cluster.member(leader).ctl("get", "k", "--print-value-only")).isEqualTo("after\n");
        }
    }
}
