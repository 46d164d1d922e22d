package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A Redis Cluster on loopback: masters (at least three) and replicas of each, created with
 * {@code redis-cli --cluster create}. It is ready once every node says {@code cluster_state:ok},
 * knows every other node, and every replica is in sync with its master. Each node keeps its
 * cluster configuration ({@code nodes.conf}) in a directory of its own, so a killed node started
 * again ({@link RedisServer#restart()}, {@link #heal()}) rejoins as itself; a master whose replica
 * was promoted meanwhile rejoins as that replica's replica. {@link #masterOf(int)} says which
 * node serves a hash slot now. Invariant: {@link #nodes()} keeps its servers and order. Not
 * thread-safe: one test or one fault loop drives it.
 */
public final class RedisCluster implements Deployment {
    private final List<RedisServer> nodes;
    private final int replicasPerMaster;
    private final Duration awaitTimeout;
    private final Path workDir;
    private final boolean temporaryWorkDir;

    private RedisCluster(List<RedisServer> nodes, Builder options, Path workDir, boolean temporaryWorkDir) {
        this.nodes = Collections.unmodifiableList(nodes);
        this.replicasPerMaster = options.replicasPerMaster;
        this.awaitTimeout = options.awaitTimeout;
        this.workDir = workDir;
        this.temporaryWorkDir = temporaryWorkDir;
    }

    /** @return a builder with the defaults: three masters, one replica each, node timeout 2 s */
    public static Builder builder() {
        return new Builder();
    }

    /** Joins the started nodes into a cluster and waits until it is ready. */
    private void create() {
        List<String> command = new ArrayList<>(
                List.of(Executables.require("redis-cli", "redis-tools").toString(), "--cluster", "create"));
        nodes.forEach(node -> command.add(node.hostPort()));
        command.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
        try (ManagedProcess create = ManagedProcess.start("redis-cli-cluster-create", command)) {
            int exit = create.awaitExit(awaitTimeout);
            if (exit != 0) {
                throw new ServerException(
                        "redis-cli --cluster create ended with exit code " + exit + create.diagnostics());
            }
        }
        awaitReady();
    }

    /**
     * Waits until every running node says {@code cluster_state:ok} and knows every other node,
     * and every replica is in sync with its master.
     *
     * @throws ServerException if that does not happen within the await timeout
     */
    public void awaitReady() {
        Await.until(
                "every node of the cluster to say cluster_state:ok and know every other",
                awaitTimeout,
                () -> nodes.stream()
                        .allMatch(node ->
                                RespQuery.text(node.port(), "CLUSTER", "INFO").contains("cluster_state:ok")
                                        && RespQuery.text(node.port(), "CLUSTER", "NODES")
                                                        .lines()
                                                        .count()
                                                == nodes.size()));
        Await.until(
                "every replica of the cluster to be in sync with its master",
                awaitTimeout,
                () -> nodes.stream()
                        .map(node -> RespQuery.text(node.port(), "INFO", "replication"))
                        .allMatch(info -> info.contains("role:master")
                                ? info.contains("connected_slaves:" + replicasPerMaster)
                                : info.contains("master_link_status:up")));
    }

    /** @return {@code redis-cluster://} with the first two nodes as seeds: the client learns the rest from them */
    @Override
    public String uri() {
        return "redis-cluster://"
                + nodes.stream().limit(2).map(RedisServer::hostPort).collect(Collectors.joining(","));
    }

    /** @return every node, masters and replicas, in the order they were created */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /**
     * @param slot a hash slot, 0 to 16383
     * @return the running node that is master of the slot as its own view says ({@code CLUSTER
     *     NODES}), empty if none is now (during a failover)
     * @throws IllegalArgumentException if it is not a slot
     */
    public Optional<RedisServer> masterOf(int slot) {
        if (slot < 0 || slot > 16_383) {
            throw new IllegalArgumentException("a hash slot is 0 to 16383, was " + slot);
        }
        for (RedisServer node : nodes) {
            if (node.isRunning()
                    && !node.isPaused()
                    && servesAsMaster(RespQuery.text(node.port(), "CLUSTER", "NODES"), slot)) {
                return Optional.of(node);
            }
        }
        return Optional.empty();
    }

    /** @return whether the {@code myself} line of a CLUSTER NODES answer is a master with the slot */
    private static boolean servesAsMaster(String clusterNodes, int slot) {
        for (String line : clusterNodes.lines().toList()) {
            String[] fields = line.split(" ");
            if (fields.length < 3 || !fields[2].contains("myself") || !fields[2].contains("master")) {
                continue;
            }
            for (int f = 8; f < fields.length; f++) {
                if (fields[f].startsWith("[")) {
                    continue; // a slot being migrated
                }
                String[] range = fields[f].split("-");
                if (slot >= Integer.parseInt(range[0]) && slot <= Integer.parseInt(range[range.length - 1])) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Resumes paused nodes, starts killed ones again (each rejoins as itself), and waits until the
     * cluster is ready again.
     *
     * @throws ServerException if it is not ready within the await timeout
     */
    @Override
    public void heal() {
        nodes.forEach(RedisServer::heal);
        awaitReady();
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
        if (temporaryWorkDir) {
            Directories.deleteQuietly(workDir);
        }
    }

    @Override
    public String toString() {
        return "Redis Cluster of " + nodes.stream().map(RedisServer::hostPort).collect(Collectors.joining(","));
    }

    /**
     * Options of a {@link RedisCluster}. Node N keeps its data, {@code nodes.conf} and output in
     * {@code dir/nodeN}; each start may take 10 s (scaled). Not thread-safe.
     */
    public static final class Builder extends GroupOptions<Builder> {
        private int masters = 3;
        private int replicasPerMaster = 1;
        private Duration nodeTimeout = Duration.ofSeconds(2);
        private RedisServer.Persistence persistence = RedisServer.Persistence.NONE;
        private Duration awaitTimeout = Timeouts.scaled(Duration.ofSeconds(60));

        private Builder() {
            super(Duration.ofSeconds(10));
        }

        /**
         * @param masters how many masters share the slots; 3 by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 3, the fewest redis-cli creates a cluster of
         */
        public Builder masters(int masters) {
            if (masters < 3) {
                throw new IllegalArgumentException("a Redis Cluster needs at least 3 masters, was " + masters);
            }
            this.masters = masters;
            return this;
        }

        /**
         * @param replicasPerMaster replicas of each master; 1 by default
         * @return this builder
         * @throws IllegalArgumentException if it is negative
         */
        public Builder replicasPerMaster(int replicasPerMaster) {
            if (replicasPerMaster < 0) {
                throw new IllegalArgumentException("replicasPerMaster must not be negative, was " + replicasPerMaster);
            }
            this.replicasPerMaster = replicasPerMaster;
            return this;
        }

        /**
         * @param nodeTimeout how long a node may not answer before the others fail it over
         *     ({@code cluster-node-timeout}); 2 s by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1 ms
         */
        public Builder nodeTimeout(Duration nodeTimeout) {
            if (nodeTimeout.toMillis() < 1) {
                throw new IllegalArgumentException("nodeTimeout must be at least 1ms, was " + nodeTimeout);
            }
            this.nodeTimeout = nodeTimeout;
            return this;
        }

        /**
         * @param persistence what each node keeps across a kill; none by default
         * @return this builder
         */
        public Builder persistence(RedisServer.Persistence persistence) {
            this.persistence = persistence;
            return this;
        }

        /**
         * @param awaitTimeout how long creating the cluster, and each wait until it is ready, may
         *     take; 60 s scaled by default
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder awaitTimeout(Duration awaitTimeout) {
            this.awaitTimeout = Timeouts.positive("awaitTimeout", awaitTimeout);
            return this;
        }

        /**
         * Starts the nodes, creates the cluster, and waits until it is ready; if anything fails,
         * stops what was started.
         *
         * @return the running cluster
         * @throws ServerException if redis-server or redis-cli is not installed (naming the
         *     package), a node does not come up, or the cluster is not ready in time
         */
        public RedisCluster start() {
            Path workDir = home("cerberus-redis-cluster-");
            List<RedisServer> nodes = new ArrayList<>();
            RedisCluster cluster = new RedisCluster(nodes, this, workDir, temporaryHome());
            try {
                for (int i = 1; i <= masters * (1 + replicasPerMaster); i++) {
                    Path nodeDir = Directories.create(workDir.resolve("node" + i));
                    nodes.add(RedisServer.builder()
                            .persistence(persistence)
                            .dir(nodeDir)
                            .output(nodeDir.resolve("server.out"))
                            .startTimeout(startTimeout())
                            .args(
                                    "--cluster-enabled",
                                    "yes",
                                    "--cluster-config-file",
                                    "nodes.conf",
                                    // not Redis's default, the port + 10000: that one no JVM has claimed
                                    "--cluster-port",
                                    Integer.toString(FreePorts.next()),
                                    "--cluster-node-timeout",
                                    Long.toString(nodeTimeout.toMillis()),
                                    "--repl-diskless-sync-delay",
                                    "0")
                            .start());
                }
                cluster.create();
            } catch (RuntimeException e) {
                cluster.close();
                throw e;
            }
            return cluster;
        }
    }
}
