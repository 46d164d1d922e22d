package io.cerberus.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A real redis-server for these tests: an {@link io.cerberus.servers.RedisServer} (which starts,
 * kills, pauses and restarts it) plus a Lettuce admin connection to read its statistics and
 * change its data behind the engine's back.
 */
final class RedisServer implements AutoCloseable {
    private final io.cerberus.servers.RedisServer server;
    private RedisClient adminClient;
    private StatefulRedisConnection<String, String> admin;

    private RedisServer(io.cerberus.servers.RedisServer server) {
        this.server = server;
    }

    /**
     * @param certificate PEM certificate of the server
     * @param key PEM private key of the server
     * @param extraArgs more options (later ones win), e.g. {@code --tls-auth-clients yes}
     * @return a started server that speaks only TLS, on {@link #port()}
     */
    static RedisServer startTls(Path certificate, Path key, String... extraArgs) {
        return new RedisServer(io.cerberus.servers.RedisServer.builder().tls(certificate, key).args(extraArgs).start());
    }

    /**
     * @param extraArgs more redis-server options, e.g. {@code --requirepass secret}
     * @return a started server
     */
    static RedisServer start(String... extraArgs) {
        return new RedisServer(io.cerberus.servers.RedisServer.start(extraArgs));
    }

    int port() {
        return server.port();
    }

    String uri() {
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

    @Override
    public void close() {
        closeAdmin();
        server.close();
    }
}
