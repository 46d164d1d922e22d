package io.cerberus.redis;

import io.cerberus.servers.Deployment;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.HashMap;
import java.util.Map;

/**
 * A real redis-server for these tests: an {@link io.cerberus.servers.RedisServer} (which starts,
 * kills, pauses and restarts it) plus a Lettuce admin connection to read its statistics and
 * change its data behind the engine's back. The connection is opened on first use and closed when
 * the server is killed or restarted.
 */
final class RedisWithAdmin implements Deployment {
    private final io.cerberus.servers.RedisServer server;
    private RedisClient adminClient;
    private StatefulRedisConnection<String, String> admin;

    private RedisWithAdmin(io.cerberus.servers.RedisServer server) {
        this.server = server;
    }

    /**
     * @param extraArgs more redis-server options, e.g. {@code --requirepass secret}
     * @return a started server
     */
    static RedisWithAdmin start(String... extraArgs) {
        return new RedisWithAdmin(io.cerberus.servers.RedisServer.start(extraArgs));
    }

    int port() {
        return server.port();
    }

    @Override
    public String uri() {
        return server.uri();
    }

    /** Kills the server with SIGKILL (no shutdown, no save). */
    void kill() {
        closeAdmin();
        server.kill();
    }

    /** Stops the server process (SIGSTOP): it keeps its connections but answers nothing. */
    void pause() {
        server.pause();
    }

    /** Lets a paused server go on (SIGCONT). */
    void resume() {
        server.resume();
    }

    /** @return whether the server is paused */
    boolean isPaused() {
        return server.isPaused();
    }

    /** @return whether the server process is running (not killed) */
    boolean isRunning() {
        return server.isRunning();
    }

    /** Starts the server again, empty, on the same port. */
    void restart() {
        closeAdmin();
        server.restart();
    }

    /** @return the admin connection's commands (authenticated with {@code password} if not null) */
    RedisCommands<String, String> admin(String password) {
        if (admin == null) {
            RedisURI.Builder uri = RedisURI.builder().withHost("127.0.0.1").withPort(server.port());
            if (password != null) {
                uri.withPassword(password.toCharArray());
            }
            adminClient = RedisClient.create(uri.build());
            admin = adminClient.connect();
        }
        return admin.sync();
    }

    RedisCommands<String, String> admin() {
        return admin(null);
    }

    /** @return calls per command name (lower case) since start or the last CONFIG RESETSTAT */
    Map<String, Long> commandCalls() {
        Map<String, Long> calls = new HashMap<>();
        for (String line : admin().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                String stats = line.substring(line.indexOf(':') + 1);
                calls.put(name, Long.parseLong(stats.substring("calls=".length(), stats.indexOf(','))));
            }
        }
        return calls;
    }

    private void closeAdmin() {
        if (admin != null) {
            admin.close();
            adminClient.shutdown();
            admin = null;
            adminClient = null;
        }
    }

    /** Resumes the server if paused and starts it again, empty, if killed. */
    @Override
    public void heal() {
        if (!server.isRunning()) {
            closeAdmin();
        }
        server.heal();
    }

    @Override
    public void close() {
        closeAdmin();
        server.close();
    }
}
