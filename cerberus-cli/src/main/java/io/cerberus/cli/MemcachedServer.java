package io.cerberus.cli;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code cerberus check --server memcached}: one {@code memcached} on a free loopback port, with
 * {@code -M} (a full server refuses new entries instead of evicting held locks) and {@code -U 0}
 * (no UDP), as {@code nobody} when the checker runs as root, since memcached refuses root. Its
 * fault, {@code server-kill}, kills it with SIGKILL (confirmed: exited, port refusing), keeps it
 * down {@code --server-down}, and starts it again on the same port until it answers {@code stats}.
 * memcached keeps nothing across a restart: every lock is free afterwards, which the fault log
 * shows with the entry counts before the kill and after the restart.
 */
final class MemcachedServer implements LockServer {
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private final ServerProcess process;

    private MemcachedServer(ServerProcess process) {
        this.process = process;
    }

    /**
     * Starts memcached.
     *
     * @param dir where its output goes
     * @return the running server
     * @throws IllegalArgumentException if memcached is not installed
     */
    static MemcachedServer start(Path dir) throws IOException, InterruptedException {
        String memcached = Executables.find("memcached").map(Path::toString).orElseThrow(() -> new IllegalArgumentException(
                "--server memcached needs memcached; install it with: apt-get install memcached"));
        Files.createDirectories(dir);
        int port = FreePorts.next();
        List<String> command = new ArrayList<>(List.of(memcached, "-l", "127.0.0.1", "-p", Integer.toString(port), "-U", "0", "-M"));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "nobody"));
        }
        MemcachedServer server = new MemcachedServer(new ServerProcess("memcached", command, dir.resolve("memcached.out"), port));
        try {
            server.startAndAwait();
        } catch (InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    @Override
    public String uri() {
        return "memcached://127.0.0.1:" + process.clientPort();
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        String before = stats(process.clientPort()).getOrDefault("curr_items", "?");
        record.accept("server-kill");
        process.kill();
        Thread.sleep(down.toMillis()); // --server-down is how long it stays down: a duration, not a wait for an event
        startAndAwait();
        String after = stats(process.clientPort()).getOrDefault("curr_items", "?");
        record.accept("server-restart");
        record.accept("confirmed server-kill: memcached exited of SIGKILL with port " + process.clientPort() + " closed, then answered"
                + " stats again; entries before the kill " + before + ", after the restart " + after + " (memcached keeps nothing)");
    }

    private void startAndAwait() throws InterruptedException {
        process.start();
        process.await("answer to stats on port " + process.clientPort(), WITHIN, () -> !stats(process.clientPort()).isEmpty());
    }

    /** @return memcached's {@code stats} ({@code curr_items}, {@code pid}, ...), on a connection of its own; empty if it does not answer */
    private static Map<String, String> stats(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(2000);
            socket.getOutputStream().write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            Map<String, String> stats = new HashMap<>();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] words = line.split(" ", 3);
                if (line.equals("END")) {
                    return stats;
                }
                if (words.length < 3 || !words[0].equals("STAT")) {
                    return Map.of();
                }
                stats.put(words[1], words[2]);
            }
            return Map.of();
        } catch (IOException e) {
            return Map.of();
        }
    }

    @Override
    public void close() {
        process.close();
    }
}
