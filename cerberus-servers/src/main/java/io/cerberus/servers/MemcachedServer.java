package io.cerberus.servers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real {@code memcached} on a loopback port, started by this JVM (never the system service):
 * {@code -l 127.0.0.1 -U 0} (no UDP), {@code -M} unless evictions are asked for (a full server
 * then refuses new entries instead of evicting held locks), and {@code -u nobody} when running as
 * root, since memcached refuses root. It is ready once it answers {@code stats}; a process that
 * ends before that fails the start at once with its output. Faults: {@link #kill()},
 * {@link #pause()}, {@link #resume()}, {@link #restart()} (empty: memcached keeps nothing). Not
 * thread-safe: one test or one fault loop drives it.
 */
public final class MemcachedServer implements AutoCloseable {
    private static final Duration ANSWER = Duration.ofSeconds(2);

    private final int port;
    private final List<String> command;
    private final Path output;
    private final Duration startTimeout;
    private ManagedProcess process;
    private boolean paused;

    private MemcachedServer(Builder builder) {
        this.port = builder.port == 0 ? FreePorts.next() : builder.port;
        this.output = builder.output;
        this.startTimeout = builder.startTimeout;
        List<String> command = new ArrayList<>(List.of(Executables.require("memcached", "memcached").toString(),
                "-l", "127.0.0.1", "-p", Integer.toString(port), "-U", "0"));
        if (builder.memoryMb > 0) {
            command.addAll(List.of("-m", Integer.toString(builder.memoryMb)));
        }
        if (!builder.evictions) {
            command.add("-M");
        }
        if (!builder.cas) {
            command.add("-C");
        }
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "nobody"));
        }
        this.command = List.copyOf(command);
    }

    /** @return a builder with the defaults: a free port, no evictions, CAS on, memcached's default memory */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a server with the defaults of {@link #builder()}.
     *
     * @return the running server
     * @throws ServerException if memcached is not installed, or does not answer {@code stats} in time
     */
    public static MemcachedServer start() {
        return builder().start();
    }

    private void startProcess() {
        String name = "memcached-" + port;
        process = output == null ? ManagedProcess.start(name, command) : ManagedProcess.startWithOutput(name, command, output);
        paused = false;
        try {
            Await.until("memcached on 127.0.0.1:" + port + " to answer stats", startTimeout, process, () -> !statsOrEmpty().isEmpty());
        } catch (RuntimeException e) {
            process.close();
            throw e;
        }
    }

    /** @return the port it serves on */
    public int port() {
        return port;
    }

    /** @return its engine URI, {@code memcached://127.0.0.1:PORT} */
    public String uri() {
        return "memcached://127.0.0.1:" + port;
    }

    /** @return the command that starts it, for messages */
    public List<String> command() {
        return command;
    }

    /**
     * Kills the server with SIGKILL and waits until it has exited and its port refuses
     * connections: every entry is gone.
     *
     * @throws ServerException if either does not happen within 10 s (scaled)
     */
    public void kill() {
        Duration within = Timeouts.scaled(Duration.ofSeconds(10));
        process.kill(within);
        paused = false;
        Await.until("killed memcached's port " + port + " to refuse connections", within, () -> !FreePorts.accepts(port));
    }

    /**
     * Stops the server process (SIGSTOP): it keeps its connections but answers nothing.
     *
     * @throws ServerException if the signal cannot be sent
     */
    public void pause() {
        process.signal("STOP");
        paused = true;
    }

    /**
     * Lets a paused server go on (SIGCONT).
     *
     * @throws ServerException if the signal cannot be sent
     */
    public void resume() {
        process.signal("CONT");
        paused = false;
    }

    /** @return whether it was paused and not resumed since */
    public boolean isPaused() {
        return paused;
    }

    /** @return whether its process is running (a paused one is) */
    public boolean isRunning() {
        return process.isAlive();
    }

    /**
     * Starts the server again on the same port, empty; kills it first if it still runs.
     *
     * @throws ServerException if it does not answer {@code stats} in time
     */
    public void restart() {
        if (process.isAlive()) {
            kill();
        }
        process.close();
        startProcess();
    }

    /**
     * @return the general statistics ({@code stats}: {@code curr_items}, {@code pid}, ...), by name
     * @throws ServerException if the server does not answer within 2 s (scaled)
     */
    public Map<String, String> stats() {
        try {
            return stats(Timeouts.scaled(ANSWER));
        } catch (IOException e) {
            throw new ServerException("memcached on 127.0.0.1:" + port + " did not answer 'stats': " + e, e);
        }
    }

    /**
     * @return the number of entries the server holds ({@code curr_items})
     * @throws ServerException if the server does not answer
     */
    public long items() {
        return Long.parseLong(stats().get("curr_items"));
    }

    private Map<String, String> statsOrEmpty() {
        try {
            return stats(ANSWER);
        } catch (IOException e) {
            return Map.of();
        }
    }

    private Map<String, String> stats(Duration within) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), (int) within.toMillis());
            socket.setSoTimeout((int) within.toMillis());
            socket.getOutputStream().write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            Map<String, String> stats = new HashMap<>();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("END")) {
                    return stats;
                }
                String[] words = line.split(" ", 3);
                if (words.length < 3 || !words[0].equals("STAT")) {
                    throw new IOException("unexpected answer line '" + line + "'");
                }
                stats.put(words[1], words[2]);
            }
            throw new IOException("the connection ended before END");
        }
    }

    /** Kills the server (continuing it first if paused) and waits for it. */
    @Override
    public void close() {
        if (process != null) {
            process.close();
        }
    }

    /** Options of a {@link MemcachedServer}; each has the default the tests want. Not thread-safe. */
    public static final class Builder {
        private int port;
        private boolean evictions;
        private boolean cas = true;
        private int memoryMb;
        private Path output;
        private Duration startTimeout = Timeouts.scaled(Duration.ofSeconds(10));

        private Builder() {
        }

        /**
         * @param port the port to serve on; 0 (the default) for a free one from {@link FreePorts}
         * @return this builder
         * @throws IllegalArgumentException if it is not a port number
         */
        public Builder port(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * @param evictions whether a full server may evict entries (memcached's own default); off
         *     by default here, which is {@code -M}
         * @return this builder
         */
        public Builder evictions(boolean evictions) {
            this.evictions = evictions;
            return this;
        }

        /**
         * @param cas whether compare-and-swap is on (the default); off is {@code -C}
         * @return this builder
         */
        public Builder cas(boolean cas) {
            this.cas = cas;
            return this;
        }

        /**
         * @param memoryMb the memory for entries in megabytes ({@code -m}); by default memcached's own (64)
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder memoryMb(int memoryMb) {
            if (memoryMb < 1) {
                throw new IllegalArgumentException("memory must be at least 1 MB, was " + memoryMb);
            }
            this.memoryMb = memoryMb;
            return this;
        }

        /**
         * @param output a file that the server's standard output and error are appended to, kept
         *     after close; by default they go to a temporary file shown in failure messages
         * @return this builder
         */
        public Builder output(Path output) {
            this.output = output;
            return this;
        }

        /**
         * @param startTimeout how long a start or restart may take until it answers {@code stats};
         *     10 s scaled by {@link Timeouts} by default
         * @return this builder
         */
        public Builder startTimeout(Duration startTimeout) {
            this.startTimeout = startTimeout;
            return this;
        }

        /**
         * Starts the server and waits until it answers {@code stats}.
         *
         * @return the running server
         * @throws ServerException if memcached is not installed (naming the package), ends before
         *     it answers (with its output), or does not answer in time
         */
        public MemcachedServer start() {
            MemcachedServer server = new MemcachedServer(this);
            server.startProcess();
            return server;
        }
    }
}
