package io.cerberus.servers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
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
public final class MemcachedServer extends LoopbackServer {
    private static final Duration ANSWER = Duration.ofSeconds(2);

    private MemcachedServer(Builder builder, int port) {
        super("memcached", port, command(builder, port), builder);
    }

    private static List<String> command(Builder builder, int port) {
        List<String> command = new ArrayList<>(List.of(
                Executables.require("memcached", "memcached").toString(),
                "-l",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-U",
                "0"));
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
        return command;
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

    @Override
    protected String servesWhen() {
        return "answer stats";
    }

    @Override
    protected boolean serves() {
        return !statsOrEmpty().isEmpty();
    }

    /** @return its engine URI, {@code memcached://127.0.0.1:PORT} */
    @Override
    public String uri() {
        return "memcached://127.0.0.1:" + port();
    }

    /**
     * @return the general statistics ({@code stats}: {@code curr_items}, {@code pid}, ...), by name
     * @throws ServerException if the server does not answer within 2 s (scaled)
     */
    public Map<String, String> stats() {
        try {
            return stats(Timeouts.scaled(ANSWER));
        } catch (IOException e) {
            throw new ServerException("memcached on 127.0.0.1:" + port() + " did not answer 'stats': " + e, e);
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
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()), (int) within.toMillis());
            socket.setSoTimeout((int) within.toMillis());
            socket.getOutputStream().write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
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

    /** Options of a {@link MemcachedServer}; each has the default the tests want. Not thread-safe. */
    public static final class Builder extends LoopbackServer.Options<Builder> {
        private boolean evictions;
        private boolean cas = true;
        private int memoryMb;

        private Builder() {}

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
         * Starts the server and waits until it answers {@code stats}.
         *
         * @return the running server
         * @throws ServerException if memcached is not installed (naming the package), ends before
         *     it answers (with its output), or does not answer in time
         */
        public MemcachedServer start() {
            MemcachedServer server = new MemcachedServer(this, portOrFree());
            server.startProcess();
            return server;
        }
    }
}
