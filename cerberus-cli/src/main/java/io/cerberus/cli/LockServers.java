package io.cerberus.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The lock servers a {@code cerberus check} run starts itself ({@code --server}), so that it can
 * kill and restart them: one {@code redis-server}, Redlock's five, a 3-server ZooKeeper ensemble
 * or a 3-member etcd cluster. A server fault is {@link #kill} (confirmed: exited, port closed),
 * the down time, then {@link #restart} (confirmed: serving, or back in its ensemble).
 */
interface LockServers extends AutoCloseable {
    /** The values of {@code --server}. */
    List<String> KINDS = List.of("redis", "redlock", "zk", "etcd");

    /**
     * Starts the servers of {@code kind} and waits until they serve.
     *
     * @param kind one of {@link #KINDS}
     * @param dir where their data and output go
     * @param redisPersistent with redis and redlock: keep an append-only file
     * @param lease the clients' lease: ZooKeeper's session timeout and etcd's lease TTL follow it
     * @return the running servers
     * @throws IllegalArgumentException if the server program is not installed
     */
    static LockServers start(String kind, Path dir, boolean redisPersistent, Duration lease) throws IOException, InterruptedException {
        return switch (kind) {
            case "zk" -> CheckZooKeeperEnsemble.start(dir, lease);
            case "etcd" -> CheckEtcdCluster.start(dir, lease);
            default -> CheckServers.start(kind, dir, redisPersistent);
        };
    }

    /** @return the engine URI the clients use */
    String uri();

    /**
     * Kills what {@code fault} names with SIGKILL and confirms it: each process exited and its port
     * refuses connections.
     *
     * @param fault {@code server-kill}, {@code majority-kill} or {@code leader-kill}
     * @return what was killed, for the fault log (e.g. {@code member 2 (leader)}), may be empty
     * @throws IllegalArgumentException if these servers do not take that fault
     */
    String kill(String fault) throws IOException, InterruptedException;

    /**
     * Starts what the last {@link #kill} took down, on the same ports and data, and confirms it
     * serves again (an ensemble member: that it rejoined its ensemble).
     *
     * @return what was restarted and how it came back, for the fault log, may be empty
     */
    String restart() throws IOException, InterruptedException;

    @Override
    void close();
}
