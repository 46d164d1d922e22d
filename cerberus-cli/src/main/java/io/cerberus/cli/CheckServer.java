package io.cerberus.cli;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A lock server the safety checker starts, kills and restarts itself: {@code redis-server} on a
 * free loopback port, its data in the run's directory, with or without an append-only file
 * ({@code appendfsync always}) so a restart keeps or loses the keys; or a Sentinel
 * ({@code redis-server sentinel.conf --sentinel}) watching such servers.
 */
final class CheckServer implements AutoCloseable {
    private final Path dir;
    private final boolean persistent;
    private final int port;
    private List<String> extra;
    private Process process;
    /** A Sentinel's configuration directory outside {@link #dir}, deleted on close; null if none. */
    private Path configDir;

    private CheckServer(Path dir, boolean persistent, int port, List<String> extra) {
        this.dir = dir;
        this.persistent = persistent;
        this.port = port;
        this.extra = extra;
    }

    /**
     * Starts redis-server.
     *
     * @param dir its data directory
     * @param persistent whether it keeps an append-only file, fsynced on every write
     * @return the running server
     * @throws IllegalArgumentException if redis-server is not installed
     */
    static CheckServer startRedis(Path dir, boolean persistent) throws IOException, InterruptedException {
        return startRedis(dir, persistent, List.of());
    }

    /**
     * Starts redis-server with more arguments, such as {@code --replicaof HOST PORT}.
     *
     * @param dir its data directory
     * @param persistent whether it keeps an append-only file, fsynced on every write
     * @param extra more arguments of redis-server
     * @return the running server
     * @throws IllegalArgumentException if redis-server is not installed
     */
    static CheckServer startRedis(Path dir, boolean persistent, List<String> extra) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        CheckServer server = new CheckServer(dir, persistent, freePort(), extra);
        server.start();
        return server;
    }

    /**
     * Starts a Sentinel that watches a master under a name.
     *
     * <p>A Sentinel rewrites its configuration file, with fsync, on each step of a failover, in its one thread. On a
     * busy disk an fsync can take seconds, and a Sentinel whose timer runs 2 s late enters TILT mode: for 30 s it
     * neither fails over nor sees a server come back. So the file is on {@code /dev/shm} (memory) where there is one,
     * and is deleted on {@link #close()}; the Sentinel's output stays in {@code dir}.
     *
     * @param dir its directory (its output, and its configuration file where there is no {@code /dev/shm})
     * @param sentinelConfig the {@code sentinel ...} lines of its configuration
     * @return the running Sentinel
     */
    static CheckServer startSentinel(Path dir, List<String> sentinelConfig) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        int port = freePort();
        Path memory = Path.of("/dev/shm");
        Path configDir = Files.isDirectory(memory) && Files.isWritable(memory) ? Files.createTempDirectory(memory, "cerberus-sentinel-") : dir;
        List<String> config = new ArrayList<>(List.of("port " + port, "bind 127.0.0.1", "daemonize no", "protected-mode no", "dir " + configDir));
        config.addAll(sentinelConfig);
        Path file = Files.writeString(configDir.resolve("sentinel.conf"), String.join("\n", config) + "\n");
        CheckServer sentinel = new CheckServer(dir, false, port, List.of(file.toString(), "--sentinel"));
        sentinel.configDir = configDir.equals(dir) ? null : configDir;
        try {
            sentinel.start();
        } catch (IOException | InterruptedException | RuntimeException e) {
            sentinel.close();
            throw e;
        }
        return sentinel;
    }

    int port() {
        return port;
    }

    String uri() {
        return "redis://" + hostPort();
    }

    String hostPort() {
        return "127.0.0.1:" + port;
    }

    private void start() throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(redisServer()));
        if (extra.contains("--sentinel")) {
            command.addAll(extra);
        } else {
            command.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(), "--save", "",
                    "--protected-mode", "no", "--daemonize", "no"));
            command.addAll(persistent ? List.of("--appendonly", "yes", "--appendfsync", "always") : List.of("--appendonly", "no"));
            command.addAll(extra);
        }
        process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.out").toFile()))
                .redirectErrorStream(true).start();
        awaitPort(true, Duration.ofSeconds(20));
    }

    /** Kills the server with SIGKILL and waits until it is gone and its port closed. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("redis-server (pid " + process.pid() + ") did not die of SIGKILL");
        }
        awaitPort(false, Duration.ofSeconds(10));
    }

    /** Starts the server again on the same port and data directory, and waits until it accepts connections. */
    void restart() throws IOException, InterruptedException {
        start();
    }

    /**
     * Starts the server again with other extra arguments, such as {@code --replicaof} its new master.
     *
     * @param otherExtra the extra arguments from now on
     */
    void restart(List<String> otherExtra) throws IOException, InterruptedException {
        extra = otherExtra;
        start();
    }

    private static String redisServer() {
        for (String path : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path candidate = Path.of(path.isEmpty() ? "." : path, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new IllegalArgumentException("--server redis needs redis-server; install it with: apt-get install redis-server");
    }

    private void awaitPort(boolean open, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (accepts() != open) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("redis-server port " + port + " did not " + (open ? "open" : "close") + " in time"
                        + (open ? "; see " + dir.resolve("server.out") : ""));
            }
            if (open && !process.isAlive()) {
                throw new IllegalStateException("redis-server exited at start; see " + dir.resolve("server.out"));
            }
            Thread.sleep(10);
        }
    }

    private boolean accepts() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() {
        return io.cerberus.servers.FreePorts.next();
    }

    @Override
    public void close() {
        if (process != null) {
            process.destroyForcibly();
        }
        if (configDir != null) {
            try {
                if (process != null) {
                    process.waitFor(5, TimeUnit.SECONDS); // it may be rewriting the file
                }
                Directories.deleteRecursively(configDir);
            } catch (IOException e) {
                System.err.println("cerberus: warning: could not delete the Sentinel's configuration in " + configDir + ": " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
