package io.cerberus.servers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code redis-server} on a loopback port, started by this JVM (never the system service):
 * {@code --bind 127.0.0.1 --daemonize no --protected-mode no}, no snapshots ({@code --save ""}),
 * and either no persistence or an append-only file synced on every write. Extra arguments
 * ({@code --requirepass}, {@code --replicaof}, cluster options) come last, so they win; with
 * {@link Builder#sentinel} it is a Sentinel instead of a data server. It is ready
 * once it answers PING (with TLS: once its port accepts connections), not while it is still
 * loading its append-only file; a process that ends before that fails the start at once with
 * its output. Faults: {@link #kill()}, {@link #pause()}, {@link #resume()}, {@link #restart()}
 * (same port and arguments: empty without persistence, its data back with
 * {@link Persistence#AOF_ALWAYS}). Not thread-safe: one test or one fault loop drives it.
 */
public final class RedisServer extends LoopbackServer {

    /** What the server keeps across a kill. */
    public enum Persistence {
        /** Nothing: {@code --appendonly no}. */
        NONE,
        /** An append-only file, synced before each write is answered: {@code --appendonly yes --appendfsync always}. */
        AOF_ALWAYS
    }

    private final boolean tls;

    private RedisServer(Builder builder, int port) {
        super(
                builder.sentinelConfig == null ? "redis-server" : "redis-sentinel",
                port,
                command(builder, port),
                builder);
        this.tls = builder.certificate != null;
    }

    private static List<String> command(Builder builder, int port) {
        List<String> command = new ArrayList<>(
                List.of(Executables.require("redis-server", "redis-server").toString()));
        if (builder.sentinelConfig != null) {
            command.add(builder.sentinelConfig.toString()); // a configuration file must come first
        }
        if (builder.certificate != null) {
            command.addAll(List.of(
                    "--port",
                    "0",
                    "--tls-port",
                    Integer.toString(port),
                    "--tls-cert-file",
                    builder.certificate.toString(),
                    "--tls-key-file",
                    builder.key.toString(),
                    "--tls-auth-clients",
                    "no"));
        } else {
            command.addAll(List.of("--port", Integer.toString(port)));
        }
        command.addAll(List.of("--bind", "127.0.0.1", "--daemonize", "no", "--protected-mode", "no", "--save", ""));
        if (builder.dir != null) {
            command.addAll(List.of("--dir", builder.dir.toString()));
        }
        command.addAll(
                builder.persistence == Persistence.AOF_ALWAYS
                        ? List.of("--appendonly", "yes", "--appendfsync", "always")
                        : List.of("--appendonly", "no"));
        command.addAll(builder.args);
        if (builder.sentinelConfig != null) {
            command.add("--sentinel");
        }
        return command;
    }

    /** @return a builder with the defaults: a free port, no TLS, no persistence, no extra arguments */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a server with the defaults of {@link #builder()} and some extra arguments.
     *
     * @param args more redis-server options, e.g. {@code --requirepass}, {@code secret}
     * @return the running server
     * @throws ServerException if redis-server is not installed, or does not come up in time
     */
    public static RedisServer start(String... args) {
        return builder().args(args).start();
    }

    @Override
    protected String servesWhen() {
        return tls ? "accept connections" : "answer PING";
    }

    @Override
    protected boolean serves() {
        return tls ? FreePorts.accepts(port()) : answersPing();
    }

    /**
     * @return whether it answers a PING, even with "authentication required", but not with
     *     {@code -LOADING}: a server that accepts connections may still be reading its append-only file
     */
    private boolean answersPing() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()), 200);
            socket.setSoTimeout(1000);
            socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            String answer = new BufferedReader(
                            new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            return answer != null && !answer.startsWith("-LOADING");
        } catch (IOException e) {
            return false;
        }
    }

    /** @return its engine URI: {@code redis://127.0.0.1:PORT}, or {@code rediss://} with TLS */
    @Override
    public String uri() {
        return (tls ? "rediss://" : "redis://") + hostPort();
    }

    /** Options of a {@link RedisServer}; each has the default the tests want. Not thread-safe. */
    public static final class Builder extends LoopbackServer.Options<Builder> {
        private Path certificate;
        private Path key;
        private Persistence persistence = Persistence.NONE;
        private Path dir;
        private Path sentinelConfig;
        private final List<String> args = new ArrayList<>();

        private Builder() {}

        /**
         * Serves TLS only, on the port ({@code --port 0 --tls-port PORT}), without asking clients
         * for certificates; {@code --tls-auth-clients yes} and {@code --tls-ca-cert-file} in
         * {@link #args} change that.
         *
         * @param certificate the server's PEM certificate
         * @param key its PEM private key
         * @return this builder
         */
        public Builder tls(Path certificate, Path key) {
            this.certificate = certificate;
            this.key = key;
            return this;
        }

        /**
         * @param persistence what it keeps across a kill; {@link Persistence#NONE} by default.
         *     With {@link Persistence#AOF_ALWAYS} give a {@link #dir}.
         * @return this builder
         */
        public Builder persistence(Persistence persistence) {
            this.persistence = persistence;
            return this;
        }

        /**
         * @param dir its working directory ({@code --dir}), where the append-only file and a
         *     cluster's node file go; by default the JVM's working directory, which is fine only
         *     without persistence
         * @return this builder
         */
        public Builder dir(Path dir) {
            this.dir = dir;
            return this;
        }

        /**
         * @param args more redis-server options, after the others so they win, e.g.
         *     {@code "--requirepass", "secret"} or {@code "--replicaof", "127.0.0.1", "15001"}
         * @return this builder
         */
        public Builder args(String... args) {
            this.args.addAll(List.of(args));
            return this;
        }

        /**
         * Starts it as a Sentinel ({@code redis-server FILE ... --sentinel}) rather than a data
         * server: the file holds its {@code sentinel monitor} lines, and the Sentinel rewrites it
         * on every change of what it knows, so it must be writable and outlive restarts.
         *
         * @param config the Sentinel's configuration file
         * @return this builder
         */
        public Builder sentinel(Path config) {
            this.sentinelConfig = config;
            return this;
        }

        /**
         * Starts the server and waits until it serves.
         *
         * @return the running server
         * @throws IllegalArgumentException if persistence is asked for without a directory, or for a Sentinel
         * @throws ServerException if redis-server is not installed (naming the package), ends
         *     before it serves (with its output), or does not serve in time
         */
        public RedisServer start() {
            if (persistence != Persistence.NONE && dir == null) {
                throw new IllegalArgumentException(
                        "persistence " + persistence + " needs a dir for the append-only file");
            }
            if (persistence != Persistence.NONE && sentinelConfig != null) {
                throw new IllegalArgumentException(
                        "a Sentinel keeps no data: persistence must be NONE, was " + persistence);
            }
            RedisServer server = new RedisServer(this, portOrFree());
            server.startProcess();
            return server;
        }
    }
}
