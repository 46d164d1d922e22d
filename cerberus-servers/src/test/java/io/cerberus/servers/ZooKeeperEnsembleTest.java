package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Three ZooKeeper members from the test class path: one leads, a killed leader is replaced, heal brings it back. */
class ZooKeeperEnsembleTest {
    private static final Duration ELECTION = Timeouts.scaled(Duration.ofSeconds(30));

    @Test
    void oneMemberLeadsAndAKilledLeaderIsReplacedAndHealedBack() {
        try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.start()) {
            assertThat(ensemble.size()).isEqualTo(3);
            assertThat(ensemble.uri()).matches("zk://127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+");
            int leader = ensemble.awaitLeader(ELECTION);
            assertThat(ensemble.members().stream()
                            .map(member -> member.mode().orElse(""))
                            .toList())
                    .containsExactlyInAnyOrderElementsOf(List.of("leader", "follower", "follower"));

            ensemble.member(leader).kill();
            int next = ensemble.awaitLeader(ELECTION);
            assertThat(next).isNotEqualTo(leader);

            int follower = 3 - leader - next;
            ensemble.member(follower).pause();
            ensemble.heal();
            assertThat(ensemble.member(leader).mode())
                    .as("the killed leader rejoined")
                    .hasValueSatisfying(mode -> assertThat(mode).isIn("leader", "follower"));
            assertThat(ensemble.member(follower).isPaused()).isFalse();
        }
    }

    @Test
    void anEnsembleNeedsTwoMembers() {
        assertThatThrownBy(() -> ZooKeeperEnsemble.builder().size(1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 2 members");
    }
}
