package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Needs redis-server installed. */
class RedisGroupTest {

    @Test
    void itsUriListsEveryNodeInOrderAsRedlockParsesIt() {
        try (RedisGroup group = RedisGroup.start(3)) {
            assertThat(group.uri())
                    .isEqualTo("redlock://127.0.0.1:" + group.node(0).port() + ",127.0.0.1:"
                            + group.node(1).port() + ",127.0.0.1:"
                            + group.node(2).port());
            assertThat(group.nodes())
                    .allSatisfy(node ->
                            assertThat(RespQuery.send(node.port(), "PING")).containsExactly("PONG"));
        }
    }

    @Test
    void healStartsKilledNodesAndResumesPausedOnes() {
        try (RedisGroup group = RedisGroup.start(3)) {
            group.node(0).pause();
            group.node(1).kill();
            assertThat(RespQuery.send(group.node(1).port(), "PING")).isEmpty();
            group.heal();
            assertThat(group.node(0).isPaused()).isFalse();
            assertThat(group.nodes())
                    .allSatisfy(node ->
                            assertThat(RespQuery.send(node.port(), "PING")).containsExactly("PONG"));
        }
    }

    @Test
    void withADirectoryEachNodeKeepsItsDataAndOutputInItsOwn(@TempDir Path dir) {
        try (RedisGroup group = RedisGroup.builder()
                .count(2)
                .dir(dir)
                .persistence(RedisServer.Persistence.AOF_ALWAYS)
                .start()) {
            assertThat(RespQuery.send(group.node(1).port(), "SET", "k", "v")).containsExactly("OK");
            group.node(1).kill();
            group.heal();
            assertThat(RespQuery.send(group.node(1).port(), "GET", "k")).containsExactly("v");
        }
        assertThat(List.of(dir.resolve("node1/server.out"), dir.resolve("node2/server.out")))
                .allMatch(Files::isRegularFile);
    }

    @Test
    void aGroupHasAtLeastOneNode() {
        assertThatThrownBy(() -> RedisGroup.builder().count(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1 node");
    }
}
