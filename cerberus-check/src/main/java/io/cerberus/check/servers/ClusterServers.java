package io.cerberus.check.servers;

import io.cerberus.servers.Await;
import io.cerberus.servers.Executables;
import io.cerberus.servers.RedisCluster;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import io.cerberus.servers.ServerException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code cerberus check --server cluster}: a {@link RedisCluster} of three masters with one replica
 * each (a node is failed after 2 s without an answer), so a failover takes seconds. Its fault,
 * {@code failover}, kills a master with SIGKILL (the masters in turn), waits until its replica
 * says it is a master of a cluster in state ok, and after {@code --server-down} starts the old
 * master again: it must rejoin as the replica of the one promoted, in sync. As with Sentinel,
 * replication is asynchronous: a grant the killed master had not yet sent to its replica is not on
 * the promoted one, unless the engine's {@code waitReplicas=1} ({@code --wait-replicas 1}) made the
 * grant wait for it. The locks' names spread them over the three masters, so each failover moves
 * some of them and not the others.
 */
final class ClusterServers implements LockServer {
    /** How long a step may take: a failover is a node timeout (2 s) and an election; a rejoin is a full sync. */
    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final RedisCluster cluster;
    private int next;

    private ClusterServers(RedisCluster cluster) {
        this.cluster = cluster;
    }

    /**
     * @param dir the run's directory: node N's data, {@code nodes.conf} and output in {@code nodeN}
     * @param persistent whether each node keeps an append-only file, fsynced on every write
     * @return the running cluster, ready to fail over
     * @throws IllegalArgumentException if redis-server or redis-cli is not installed
     */
    static ClusterServers start(Path dir, boolean persistent) {
        if (Executables.find("redis-server").isEmpty()
                || Executables.find("redis-cli").isEmpty()) {
            throw new IllegalArgumentException("--server cluster needs redis-server and redis-cli; install them with:"
                    + " apt-get install redis-server redis-tools");
        }
        return new ClusterServers(RedisCluster.builder()
                .dir(dir)
                .persistence(persistent ? RedisServer.Persistence.AOF_ALWAYS : RedisServer.Persistence.NONE)
                .nodeTimeout(Duration.ofSeconds(2))
                .startTimeout(Duration.ofSeconds(20))
                .awaitTimeout(WITHIN)
                .start());
    }

    @Override
    public String uri() {
        return cluster.uri();
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        List<RedisServer> masters = cluster.nodes().stream()
                .filter(node -> replication(node).contains("role:master"))
                .toList();
        if (masters.isEmpty()) {
            throw new ServerException("no node of the cluster says it is a master; " + cluster);
        }
        RedisServer old = masters.get(next++ % masters.size());
        RedisServer replica = cluster.nodes().stream()
                .filter(node -> replicates(node, old))
                .findFirst()
                .orElseThrow(
                        () -> new ServerException("node" + number(old) + " is a master with no replica; " + cluster));
        record.accept("failover: SIGKILL to master node" + number(old) + ", replicated by node" + number(replica));
        long killed = System.nanoTime();
        old.kill();
        Await.until(
                "node" + number(replica) + " to be promoted in place of the killed master node" + number(old),
                WITHIN,
                () -> replication(replica).contains("role:master")
                        && RespQuery.text(replica.port(), "CLUSTER", "INFO").contains("cluster_state:ok"));
        long promotedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        record.accept("promoted node" + number(replica) + " after " + promotedAfter + "ms");
        long rest = down.toMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        if (rest > 0) {
            Thread.sleep(
                    rest); // --server-down is how long the old master stays down: a duration, not a wait for an event
        }
        cluster.heal(); // starts the old master again, then every node knows every other, every replica in sync with
        // its master
        if (!replicates(old, replica)) {
            throw new ServerException("node" + number(old) + " came back but does not replicate node" + number(replica)
                    + ": " + replication(old));
        }
        record.accept("server-restart node" + number(old) + " as replica");
        record.accept(
                "confirmed " + fault + ": node" + number(old) + " exited and its port closed, node" + number(replica)
                        + " was promoted after " + promotedAfter + "ms, node" + number(old) + " replicates it in sync");
    }

    /** @return the node's {@code INFO replication}, or empty if it does not answer */
    private static String replication(RedisServer node) {
        return node.isRunning() ? RespQuery.text(node.port(), "INFO", "replication") : "";
    }

    /** @return whether {@code replica} is a replica of {@code master} with its link up */
    private static boolean replicates(RedisServer replica, RedisServer master) {
        String info = replication(replica);
        return info.contains("role:slave")
                && info.contains("master_link_status:up")
                && info.lines().map(String::strip).anyMatch(line -> line.equals("master_port:" + master.port()));
    }

    /** @return the node's number in the logs, 1 for the first one created */
    private int number(RedisServer node) {
        return LockServer.number(cluster.nodes(), node);
    }

    @Override
    public void close() {
        cluster.close();
    }
}
