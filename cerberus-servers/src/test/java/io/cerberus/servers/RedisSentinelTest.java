package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Needs redis-server installed. One deployment, failed over twice: a failover takes seconds. */
class RedisSentinelTest {

    @Test
    void failsOverToTheReplicaAndTakesTheKilledPrimaryBackAsAReplica() {
        try (RedisSentinel sentinel = RedisSentinel.start()) {
            assertThat(sentinel.uri())
                    .isEqualTo("redis-sentinel://"
                            + sentinel.sentinels().stream()
                                    .map(RedisServer::hostPort)
                                    .collect(Collectors.joining(",")) + "#locks");
            RedisServer first = sentinel.primary();
            assertThat(first).isSameAs(sentinel.nodes().get(0));
            assertThat(RespQuery.send(first.port(), "SET", "k", "v")).containsExactly("OK");

            first.kill();
            RedisServer second = sentinel.awaitNewPrimary(first);
            assertThat(second).isSameAs(sentinel.nodes().get(1));
            assertThat(RespQuery.text(second.port(), "INFO", "replication")).contains("role:master");
            assertThat(RespQuery.send(second.port(), "GET", "k"))
                    .as("replicated before the kill")
                    .containsExactly("v");

            RedisServer back = sentinel.restartAsReplica(first);
            assertThat(back.port()).isEqualTo(first.port());
            assertThat(sentinel.nodes().get(0)).isSameAs(back);
            assertThat(RespQuery.text(back.port(), "INFO", "replication")).contains("role:slave");

            assertThat(sentinel.failover())
                    .as("a failover asked for, every node up")
                    .isSameAs(back);
        }
    }

    @Test
    void healStartsAKilledReplicaAgainAsAReplica() {
        try (RedisSentinel sentinel = RedisSentinel.start()) {
            RedisServer replica = sentinel.nodes().get(1);
            assertThatThrownBy(() -> sentinel.restartAsReplica(replica))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("takes a killed node");
            replica.kill();
            sentinel.heal();
            RedisServer healed = sentinel.nodes().get(1);
            assertThat(healed.isRunning()).isTrue();
            assertThat(RespQuery.text(healed.port(), "INFO", "replication")).contains("master_link_status:up");
            assertThat(sentinel.primary()).isSameAs(sentinel.nodes().get(0));
        }
    }

    @Test
    void aReplicaCutOffMissesThePrimarysWritesUntilReconnected() {
        try (RedisSentinel sentinel = RedisSentinel.start()) {
            RedisServer primary = sentinel.primary();
            RedisServer replica = sentinel.nodes().get(1);
            Duration within = Timeouts.scaled(Duration.ofSeconds(10));
            assertThat(RespQuery.send(primary.port(), "SET", "k", "before")).containsExactly("OK");
            Await.until(
                    "the replica to have the write",
                    within,
                    () -> RespQuery.send(replica.port(), "GET", "k").equals(List.of("before")));

            assertThat(sentinel.cutReplicasOff()).isSameAs(primary);
            assertThat(RespQuery.text(primary.port(), "INFO", "replication")).contains("connected_slaves:0");
            assertThat(RespQuery.send(primary.port(), "SET", "k", "cut")).containsExactly("OK");
            assertThat(RespQuery.send(primary.port(), "WAIT", "1", "200"))
                    .as("replicas that acknowledged")
                    .containsExactly("0");
            assertThat(RespQuery.text(replica.port(), "INFO", "replication")).contains("master_link_status:down");
            assertThat(RespQuery.send(replica.port(), "GET", "k")).containsExactly("before");

            sentinel.reconnectReplicas();
            Await.until(
                    "the replica to have the write made while it was cut off",
                    within,
                    () -> RespQuery.send(replica.port(), "GET", "k").equals(List.of("cut")));
        }
    }
}
