package io.cerberus.bench;

import io.cerberus.servers.Executables;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.ServerException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** The Redis server of a run: a redis-server started here on a free loopback port, or one given. */
final class RedisProcess implements AutoCloseable {
    private final String host;
    private final int port;
    /** The server started here, or null for an external one. */
    private final RedisServer server;

    private RedisClient admin;
    private StatefulRedisConnection<String, String> stats;
    private long statsReads;

    private RedisProcess(String host, int port, RedisServer server) {
        this.host = host;
        this.port = port;
        this.server = server;
    }

    static RedisProcess external(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--redis must be host:port, was '" + hostPort + "'");
        }
        return new RedisProcess(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)), null);
    }

    /**
     * @return a redis-server started here on a free loopback port, without persistence
     * @throws ServerException if redis-server is not installed or does not come up
     */
    static RedisProcess start() {
        RedisServer server;
        try {
            server = RedisServer.builder().startTimeout(Duration.ofSeconds(20)).start();
        } catch (ServerException e) {
            throw new ServerException(e.getMessage() + " (or pass --redis host:port)", e);
        }
        return new RedisProcess("127.0.0.1", server.port(), server);
    }

    String host() {
        return host;
    }

    int port() {
        return port;
    }

    String uri() {
        return "redis://" + host + ":" + port;
    }

    String version() {
        try {
            Path redisServer = Executables.require("redis-server", "redis-server");
            return ManagedProcess.run(
                            "redis-server --version",
                            List.of(redisServer.toString(), "--version"),
                            Duration.ofSeconds(5))
                    .strip();
        } catch (ServerException e) {
            return "redis-server (version unknown)";
        }
    }

    private StatefulRedisConnection<String, String> stats() {
        if (stats == null) {
            admin = RedisClient.create(uri());
            stats = admin.connect();
        }
        return stats;
    }

    /** @return the commands the server has run (inside scripts too, from INFO commandstats), less the INFOs of this count */
    synchronized long commandCalls() {
        long total = 0;
        for (String line : stats().sync().info("commandstats").split("\r?\n")) {
            int calls = line.indexOf("calls=");
            if (line.startsWith("cmdstat_") && calls > 0) {
                int end = line.indexOf(',', calls);
                total += Long.parseLong(line.substring(calls + 6, end));
            }
        }
        return total - statsReads++;
    }

    /** @return the keys in the server's database ({@code DBSIZE}) */
    synchronized long keys() {
        return stats().sync().dbsize();
    }

    /** @return the bytes the server has allocated ({@code used_memory} of {@code INFO memory}) */
    synchronized long usedMemory() {
        return stats().sync()
                .info("memory")
                .lines()
                .filter(line -> line.startsWith("used_memory:"))
                .findFirst()
                .map(line ->
                        Long.parseLong(line.substring("used_memory:".length()).strip()))
                .orElse(0L);
    }

    @Override
    public void close() {
        if (admin != null) {
            stats.close();
            admin.shutdown();
        }
        if (server != null) {
            server.close();
        }
    }
}
