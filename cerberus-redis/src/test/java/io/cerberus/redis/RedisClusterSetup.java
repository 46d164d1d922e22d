package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.Executables;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A real Redis Cluster on loopback: three masters and one replica each, created with
 * {@code redis-cli --cluster create}. Started once per JVM (a cluster takes a few seconds to form)
 * and shared by the test classes that need one; stopped when the JVM exits.
 */
final class RedisClusterSetup implements AutoCloseable {
    private static RedisClusterSetup shared;

    private final List<RedisServer> nodes = new ArrayList<>();

    /**
     * Starts a cluster of its own (for tests that break it); close it after.
     *
     * @param masters masters, at least 3
     * @param replicasPerMaster replicas of each master
     */
    RedisClusterSetup(int masters, int replicasPerMaster) {
        Path dir;
        try {
            dir = Files.createTempDirectory("cerberus-redis-cluster");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
            nodes.add(RedisServer.start("--cluster-enabled", "yes", "--dir", dir.toString(),
                    "--cluster-config-file", "nodes-" + i + ".conf", "--cluster-node-timeout", "2000"));
        }
        List<String> command = new ArrayList<>(List.of(Executables.require("redis-cli", "redis-tools").toString(), "--cluster", "create"));
        nodes.forEach(node -> command.add("127.0.0.1:" + node.port()));
        command.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
        try (ManagedProcess create = ManagedProcess.start("redis-cli-cluster-create", command)) {
            assertThat(create.awaitExit(TestTimes.millis(60_000))).as("redis-cli --cluster create exit code").isZero();
        }
        Poll.until("every node of the cluster says cluster_state:ok", TestTimes.millis(60_000),
                () -> nodes.stream().allMatch(node -> node.admin().clusterInfo().contains("cluster_state:ok")));
        Poll.until("every replica to be in sync with its master", TestTimes.millis(60_000),
                () -> nodes.stream().map(node -> node.admin().info("replication")).allMatch(info -> info.contains("role:master")
                        ? info.contains("connected_slaves:" + replicasPerMaster) : info.contains("master_link_status:up")));
        Poll.until("every node knows every other", TestTimes.millis(60_000),
                () -> nodes.stream().allMatch(node -> node.admin().clusterNodes().lines().count() == nodes.size()));
    }

    /** @return the shared cluster, started on first use */
    static synchronized RedisClusterSetup shared() {
        if (shared == null) {
            shared = new RedisClusterSetup(3, 1);
            RedisClusterSetup started = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> started.nodes.forEach(RedisServer::close), "redis-cluster-stop"));
        }
        return shared;
    }

    /** @return a redis-cluster URI with two of the masters as seeds */
    String uri() {
        return "redis-cluster://" + nodes.stream().limit(2).map(node -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
    }

    List<RedisServer> nodes() {
        return nodes;
    }

    /**
     * @param slot a hash slot
     * @return the node that is master of the slot now, as its own view says
     */
    RedisServer masterOf(int slot) {
        for (RedisServer node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            for (String line : node.admin().clusterNodes().lines().toList()) {
                String[] fields = line.split(" ");
                if (!fields[2].contains("myself") || !fields[2].contains("master")) {
                    continue;
                }
                for (int f = 8; f < fields.length; f++) {
                    if (fields[f].startsWith("[")) {
                        continue; // a slot being migrated
                    }
                    String[] range = fields[f].split("-");
                    if (slot >= Integer.parseInt(range[0]) && slot <= Integer.parseInt(range[range.length - 1])) {
                        return node;
                    }
                }
            }
        }
        return null;
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }
}
