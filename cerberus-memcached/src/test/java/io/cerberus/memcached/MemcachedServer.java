package io.cerberus.memcached;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real memcached on a free loopback port, started by a test (never the system service), with a
 * text-protocol admin connection to read its statistics.
 */
final class MemcachedServer implements AutoCloseable {
    private final int port;
    private final List<String> options;
    private ManagedProcess process;

    private MemcachedServer(int port, List<String> options) {
        this.port = port;
        this.options = options;
    }

    /** @return a started server that never evicts (-M), as docs/MEMCACHED.md recommends */
    static MemcachedServer start() {
        return startWith("-M");
    }

    /**
     * @param options memcached options beside the address and port, e.g. none for memcached's
     *     defaults (evictions on), {@code -M -C} for no evictions and no CAS
     * @return a started server
     */
    static MemcachedServer startWith(String... options) {
        MemcachedServer server = new MemcachedServer(FreePorts.next(), List.of(options));
        server.startProcess();
        return server;
    }

    private void startProcess() {
        List<String> command = new ArrayList<>(List.of(Executables.require("memcached", "memcached").toString(),
                "-l", "127.0.0.1", "-p", Integer.toString(port), "-U", "0", "-m", "16"));
        command.addAll(options);
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "nobody")); // memcached refuses to run as root without -u
        }
        process = ManagedProcess.start("memcached-" + port, command);
        FreePorts.awaitAccepting(port, TestTimes.millis(10_000), "memcached");
    }

    int port() {
        return port;
    }

    String uri() {
        return "memcached://127.0.0.1:" + port;
    }

    /** Kills the server with SIGKILL: every entry is gone. */
    void kill() {
        process.kill(TestTimes.millis(10_000));
    }

    /** Stops the server process (SIGSTOP): it keeps its connections but answers nothing. */
    void pause() {
        process.signal("STOP");
    }

    /** Lets a paused server go on (SIGCONT). */
    void resume() {
        process.signal("CONT");
    }

    /** Starts the server again, empty, on the same port. */
    void restart() {
        startProcess();
    }

    /** @return the general statistics ({@code stats}), by name */
    Map<String, String> stats() {
        Map<String, String> stats = new HashMap<>();
        for (String line : admin("stats")) {
            String[] words = line.split(" ", 3);
            stats.put(words[1], words[2]);
        }
        return stats;
    }

    /** @return the number of entries the server holds */
    long items() {
        return Long.parseLong(stats().get("curr_items"));
    }

    /** Sends one text-protocol command and returns the lines of its answer before {@code END}. */
    private List<String> admin(String command) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout((int) TestTimes.millis(5000).toMillis());
            OutputStream out = socket.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            List<String> lines = new ArrayList<>();
            for (String line = in.readLine(); line != null && !line.equals("END"); line = in.readLine()) {
                lines.add(line);
            }
            return lines;
        } catch (IOException e) {
            throw new UncheckedIOException("memcached on port " + port + " did not answer '" + command + "'", e);
        }
    }

    @Override
    public void close() {
        process.close();
    }
}
