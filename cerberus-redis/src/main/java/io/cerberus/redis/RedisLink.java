package io.cerberus.redis;

import io.cerberus.spi.support.Durations;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The command connection of an engine: to one server (standalone, or the master a Sentinel names),
 * or to a Redis Cluster, where Lettuce sends each command to the node that owns its key's slot.
 */
interface RedisLink extends AutoCloseable {

    /** @return the commands; on a Cluster, routed by the slot of their first key */
    RedisClusterAsyncCommands<String, String> commands();

    /**
     * @param key a key
     * @return a group such that keys of one group may be touched by one script: the key's slot on
     *     a Cluster, 0 elsewhere
     */
    int group(String key);

    /**
     * Sends {@code WAIT replicas timeout} on the connection that wrote {@code key}.
     *
     * @param key the key just written
     * @param replicas how many replicas must acknowledge
     * @param timeout how long the server waits for them
     * @return the number of replicas that acknowledged
     */
    CompletableFuture<Long> waitForReplicas(String key, int replicas, Duration timeout);

    /**
     * Reads the eviction policy of every server that stores the engine's keys: the one server (the
     * master a Sentinel names), or every master of a Cluster that serves slots.
     *
     * @param timeout the longest each reading may take
     * @return one reading per server, each completing within {@code timeout}
     */
    List<CompletableFuture<EvictionCheck.Reading>> evictionPolicies(Duration timeout);

    @Override
    void close();

    /** One server. */
    record Single(RedisClient client, StatefulRedisConnection<String, String> connection, Duration timeout)
            implements RedisLink {
        @Override
        public RedisClusterAsyncCommands<String, String> commands() {
            return connection.async();
        }

        @Override
        public int group(String key) {
            return 0;
        }

        @Override
        public CompletableFuture<Long> waitForReplicas(String key, int replicas, Duration timeout) {
            return connection
                    .async()
                    .waitForReplication(replicas, Math.max(1, timeout.toMillis()))
                    .toCompletableFuture();
        }

        @Override
        public List<CompletableFuture<EvictionCheck.Reading>> evictionPolicies(Duration timeout) {
            return List.of(EvictionCheck.read("the server", connection.async(), timeout));
        }

        @Override
        public void close() {
            try {
                connection.close();
            } finally {
                client.shutdownAsync(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    /** A Redis Cluster. */
    record Cluster(
            RedisClusterClient client, StatefulRedisClusterConnection<String, String> connection, Duration timeout)
            implements RedisLink {
        @Override
        public RedisClusterAsyncCommands<String, String> commands() {
            return connection.async();
        }

        @Override
        public int group(String key) {
            return SlotHash.getSlot(key);
        }

        /**
         * Opens the connection to every node the topology names, replicas too, waiting up to
         * {@code timeout} for them. Lettuce opens a node's connection for the first command routed to
         * it and, since 7.7, refuses that command (commands are rejected while disconnected here)
         * until the connection is made; made now, a replica's connection is ready when a failover
         * makes it the master. A node that is not reached in time is left to its first command.
         */
        void connectNodes(Duration timeout) {
            List<CompletableFuture<?>> nodes = new ArrayList<>();
            for (RedisClusterNode node : connection.getPartitions()) {
                // by host and port, as Lettuce keys the connection a slot's commands go to
                nodes.add(connection
                        .getConnectionAsync(
                                node.getUri().getHost(), node.getUri().getPort())
                        .exceptionally(failure -> null));
            }
            try {
                CompletableFuture.allOf(nodes.toArray(new CompletableFuture<?>[0]))
                        .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // the nodes not reached yet connect on their first command
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /**
         * Lettuce routes a keyed write to the master of its slot over one cached node connection,
         * the same one {@code getConnectionAsync(nodeId)} returns; so the WAIT follows the write on
         * its connection, as WAIT requires.
         */
        @Override
        public CompletableFuture<Long> waitForReplicas(String key, int replicas, Duration timeout) {
            RedisClusterNode master = connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
            if (master == null) {
                return CompletableFuture.failedFuture(
                        new IllegalStateException("no master is known for the slot of " + key));
            }
            return connection
                    .getConnectionAsync(master.getNodeId())
                    .thenCompose(node -> node.async().waitForReplication(replicas, Math.max(1, timeout.toMillis())));
        }

        /** Each master of the current topology (a failover is seen once Lettuce refreshed it), on its own connection. */
        @Override
        public List<CompletableFuture<EvictionCheck.Reading>> evictionPolicies(Duration timeout) {
            List<CompletableFuture<EvictionCheck.Reading>> readings = new ArrayList<>();
            for (RedisClusterNode node : connection.getPartitions()) {
                if (node.getRole().isUpstream() && !node.getSlots().isEmpty()) {
                    String host = node.getUri().getHost();
                    int port = node.getUri().getPort();
                    String server = "master " + host + ":" + port;
                    readings.add(connection
                            .getConnectionAsync(host, port)
                            .thenCompose(master -> EvictionCheck.read(server, master.async(), timeout))
                            .exceptionally(failure -> EvictionCheck.Reading.unreadable(
                                    server, "not connected: " + EvictionCheck.message(failure)))
                            .completeOnTimeout(
                                    EvictionCheck.Reading.unreadable(
                                            server, "no answer within " + Durations.format(timeout)),
                                    timeout.toNanos(),
                                    TimeUnit.NANOSECONDS));
                }
            }
            return readings;
        }

        @Override
        public void close() {
            try {
                connection.close();
            } finally {
                client.shutdownAsync(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }
}
