package io.cerberus.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The Redis server of a run: a redis-server started here on a free loopback port, or one given. */
final class RedisProcess implements AutoCloseable {
    private final String host;
    private final int port;
    private final Process process;
    private RedisClient admin;
    private StatefulRedisConnection<String, String> stats;
    private long statsReads;

    private RedisProcess(String host, int port, Process process) {
        this.host = host;
        this.port = port;
        this.process = process;
    }

    static RedisProcess external(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--redis must be host:port, was '" + hostPort + "'");
        }
        return new RedisProcess(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)), null);
    }

    static RedisProcess start() throws IOException, InterruptedException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Process process = new ProcessBuilder(List.of(redisServer(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--protected-mode", "no")).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectErrorStream(true).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!accepts(port)) {
            if (!process.isAlive() || System.nanoTime() - deadline > 0) {
                process.destroyForcibly();
                throw new IllegalStateException("redis-server did not start on port " + port);
            }
            Thread.sleep(10);
        }
        return new RedisProcess("127.0.0.1", port, process);
    }

    private static String redisServer() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new IllegalStateException("redis-server not found; install it with: apt-get install redis-server (or pass --redis host:port)");
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
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
            Process version = new ProcessBuilder(redisServer(), "--version").redirectErrorStream(true).start();
            String text = new String(version.getInputStream().readAllBytes()).strip();
            version.waitFor(5, TimeUnit.SECONDS);
            return text;
        } catch (IOException | RuntimeException e) {
            return "redis-server (version unknown)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
        return stats().sync().info("memory").lines().filter(line -> line.startsWith("used_memory:")).findFirst()
                .map(line -> Long.parseLong(line.substring("used_memory:".length()).strip())).orElse(0L);
    }

    @Override
    public void close() {
        if (admin != null) {
            stats.close();
            admin.shutdown();
        }
        if (process != null) {
            process.destroyForcibly();
        }
    }
}
