package io.cerberus.redis;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real redis-server on a free loopback port, started by a test (never the system service), with
 * an admin connection to read its statistics.
 */
final class RedisServer implements AutoCloseable {
    private final int port;
    private final List<String> extraArgs;
    private ManagedProcess process;
    private boolean paused;
    private RedisClient adminClient;
    private StatefulRedisConnection<String, String> admin;

    private RedisServer(int port, List<String> extraArgs) {
        this.port = port;
        this.extraArgs = extraArgs;
    }

    /**
     * @param certificate PEM certificate of the server
     * @param key PEM private key of the server
     * @param extraArgs more options (later ones win), e.g. {@code --tls-auth-clients yes}
     * @return a started server that speaks only TLS, on {@link #port()}
     */
    static RedisServer startTls(java.nio.file.Path certificate, java.nio.file.Path key, String... extraArgs) {
        int port = FreePorts.next();
        List<String> args = new ArrayList<>(List.of("--port", "0", "--tls-port", Integer.toString(port),
                "--tls-cert-file", certificate.toString(), "--tls-key-file", key.toString(), "--tls-auth-clients", "no"));
        args.addAll(List.of(extraArgs));
        RedisServer server = new RedisServer(port, args);
        server.startProcess();
        return server;
    }

    /**
     * @param extraArgs more redis-server options, e.g. {@code --requirepass secret}
     * @return a started server
     */
    static RedisServer start(String... extraArgs) {
        RedisServer server = new RedisServer(FreePorts.next(), List.of(extraArgs));
        server.startProcess();
        return server;
    }

    private void startProcess() {
        List<String> command = new ArrayList<>(List.of(Executables.require("redis-server", "redis-server").toString(),
                "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--protected-mode", "no"));
        command.addAll(extraArgs);
        process = ManagedProcess.start("redis-server-" + port, command);
        FreePorts.awaitAccepting(port, TestTimes.millis(10_000), "redis-server");
    }

    int port() {
        return port;
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Kills the server with SIGKILL (no shutdown, no save). */
    void kill() {
        closeAdmin();
        process.kill(TestTimes.millis(10_000));
    }

    /** Stops the server process (SIGSTOP): it keeps its connections but answers nothing. */
    void pause() {
        process.signal("STOP");
        paused = true;
    }

    /** Lets a paused server go on (SIGCONT). */
    void resume() {
        process.signal("CONT");
        paused = false;
    }

    /** @return whether the server is paused */
    boolean isPaused() {
        return paused;
    }

    /** @return whether the server process is running (not killed) */
    boolean isRunning() {
        return process.isAlive();
    }

    /** Starts the server again, empty, on the same port. */
    void restart() {
        startProcess();
    }

    /** @return the admin connection's commands (authenticated with {@code password} if not null) */
    RedisCommands<String, String> admin(String password) {
        if (admin == null) {
            RedisURI.Builder uri = RedisURI.builder().withHost("127.0.0.1").withPort(port);
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
        process.close();
    }
}
