package io.cerberus.redis;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A real Sentinel deployment on loopback: a master, one replica and one Sentinel that watches them
 * (quorum 1, a master is down after 1 s without an answer), so a failover takes a few seconds.
 */
final class RedisSentinelSetup implements AutoCloseable {
    static final String MASTER = "locks";

    private final RedisServer master;
    private final RedisServer replica;
    private final int sentinelPort = FreePorts.next();
    private final ManagedProcess sentinel;
    private final RedisClient sentinelClient;
    private final StatefulRedisSentinelConnection<String, String> sentinelConnection;

    RedisSentinelSetup() {
        master = RedisServer.start();
        replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
        Poll.until("the replica is in sync with the master", TestTimes.millis(20_000),
                () -> master.admin().info("replication").contains("connected_slaves:1")
                        && replica.admin().info("replication").contains("master_link_status:up"));
        try {
            Path dir = Files.createTempDirectory("cerberus-redis-sentinel");
            Path config = Files.writeString(dir.resolve("sentinel.conf"), String.join("\n",
                    "port " + sentinelPort,
                    "bind 127.0.0.1",
                    "daemonize no",
                    "protected-mode no",
                    "dir " + dir,
                    "sentinel monitor " + MASTER + " 127.0.0.1 " + master.port() + " 1",
                    "sentinel down-after-milliseconds " + MASTER + " 1000",
                    "sentinel failover-timeout " + MASTER + " 10000",
                    "sentinel parallel-syncs " + MASTER + " 1", ""));
            sentinel = ManagedProcess.start("redis-sentinel-" + sentinelPort,
                    List.of(Executables.require("redis-server", "redis-server").toString(), config.toString(), "--sentinel"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        FreePorts.awaitAccepting(sentinelPort, TestTimes.millis(10_000), "redis-sentinel");
        sentinelClient = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + sentinelPort));
        sentinelConnection = sentinelClient.connectSentinel();
        Poll.until("the sentinel knows the replica", TestTimes.millis(20_000),
                () -> !sentinelConnection.sync().replicas(MASTER).isEmpty());
    }

    /** @return a redis-sentinel URI for the deployment */
    String uri() {
        return "redis-sentinel://127.0.0.1:" + sentinelPort + "#" + MASTER;
    }

    RedisServer master() {
        return master;
    }

    RedisServer replica() {
        return replica;
    }

    /** @return the address the Sentinel gives for the master now */
    SocketAddress currentMaster() {
        return sentinelConnection.sync().getMasterAddrByName(MASTER);
    }

    @Override
    public void close() {
        try {
            sentinelConnection.close();
            sentinelClient.shutdown();
        } finally {
            sentinel.close();
            replica.close();
            master.close();
        }
    }
}
