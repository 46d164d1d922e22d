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
import java.util.List;

/**
 * A real {@code redis-server} on a loopback port, started by this JVM (never the system service):
 * {@code --bind 127.0.0.1 --daemonize no --protected-mode no}, no snapshots ({@code --save ""}),
 * and either no persistence or an append-only file synced on every write. Extra arguments
 * ({@code --requirepass}, {@code --replicaof}, cluster options) come last, so they win. It is ready
 * once it answers PING (with TLS: once its port accepts connections), not while it is still
 * loading its append-only file; a process that ends before that fails the start at once with
 * its output. Faults: {@link #kill()}, {@link #pause()}, {@link #resume()}, {@link #restart()}
 * (same port and arguments: empty without persistence, its data back with
 * {@link Persistence#AOF_ALWAYS}). Not thread-safe: one test or one fault loop drives it.
 */
public final class RedisServer implements AutoCloseable {

    /** What the server keeps across a kill. */
    public enum Persistence {
        /** Nothing: {@code --appendonly no}. */
        NONE,
        /** An append-only file, synced before each write is answered: {@code --appendonly yes --appendfsync always}. */
        AOF_ALWAYS
    }

    private final int port;
    private final boolean tls;
    private final List<String> command;
    private final Path output;
    private final Duration startTimeout;
    private ManagedProcess process;
    private boolean paused;

    private RedisServer(Builder builder, int port) {
        this.port = port;
        this.tls = builder.certificate != null;
        this.output = builder.output;
        this.startTimeout = builder.startTimeout;
        List<String> command = new ArrayList<>(List.of(Executables.require("redis-server", "redis-server").toString()));
        if (tls) {
            command.addAll(List.of("--port", "0", "--tls-port", Integer.toString(port), "--tls-cert-file", builder.certificate.toString(),
                    "--tls-key-file", builder.key.toString(), "--tls-auth-clients", "no"));
        } else {
            command.addAll(List.of("--port", Integer.toString(port)));
        }
        command.addAll(List.of("--bind", "127.0.0.1", "--daemonize", "no", "--protected-mode", "no", "--save", ""));
        if (builder.dir != null) {
            command.addAll(List.of("--dir", builder.dir.toString()));
        }
        command.addAll(builder.persistence == Persistence.AOF_ALWAYS ? List.of("--appendonly", "yes", "--appendfsync", "always")
                : List.of("--appendonly", "no"));
        command.addAll(builder.args);
        this.command = List.copyOf(command);
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

    private void startProcess() {
        String name = "redis-server-" + port;
        process = output == null ? ManagedProcess.start(name, command) : ManagedProcess.startWithOutput(name, command, output);
        paused = false;
        try {
            Await.until("redis-server on 127.0.0.1:" + port + (tls ? " to accept connections" : " to answer PING"), startTimeout, process,
                    () -> tls ? FreePorts.accepts(port) : answersPing());
        } catch (RuntimeException e) {
            process.close();
            throw e;
        }
    }

    /**
     * @return whether it answers a PING, even with "authentication required", but not with
     *     {@code -LOADING}: a server that accepts connections may still be reading its append-only file
     */
    private boolean answersPing() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            socket.setSoTimeout(1000);
            socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            String answer = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            return answer != null && !answer.startsWith("-LOADING");
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the port it serves clients on (its TLS port when started with TLS) */
    public int port() {
        return port;
    }

    /** @return {@code 127.0.0.1:PORT} */
    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    /** @return its engine URI: {@code redis://127.0.0.1:PORT}, or {@code rediss://} with TLS */
    public String uri() {
        return (tls ? "rediss://" : "redis://") + hostPort();
    }

    /** @return the command that starts it, for messages */
    public List<String> command() {
        return command;
    }

    /**
     * Kills the server with SIGKILL (no shutdown, no save) and waits until it has exited and its
     * port refuses connections.
     *
     * @throws ServerException if either does not happen within 10 s (scaled)
     */
    public void kill() {
        Duration within = Timeouts.scaled(Duration.ofSeconds(10));
        process.kill(within);
        paused = false;
        Await.until("killed redis-server's port " + port + " to refuse connections", within, () -> !FreePorts.accepts(port));
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
     * Starts the server again on the same port with the same arguments; kills it first if it
     * still runs. Without persistence it comes back empty.
     *
     * @throws ServerException if it does not come up in time
     */
    public void restart() {
        if (process.isAlive()) {
            kill();
        }
        process.close();
        startProcess();
    }

    /** Kills the server (continuing it first if paused) and waits for it. */
    @Override
    public void close() {
        if (process != null) {
            process.close();
        }
    }

    /** Options of a {@link RedisServer}; each has the default the tests want. Not thread-safe. */
    public static final class Builder {
        private int port;
        private Path certificate;
        private Path key;
        private Persistence persistence = Persistence.NONE;
        private Path dir;
        private Path output;
        private final List<String> args = new ArrayList<>();
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
         * @param output a file that the server's standard output and error are appended to, kept
         *     after close; by default they go to a temporary file shown in failure messages
         * @return this builder
         */
        public Builder output(Path output) {
            this.output = output;
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
         * @param startTimeout how long a start or restart may take until it serves; 10 s scaled by {@link Timeouts} by default
         * @return this builder
         */
        public Builder startTimeout(Duration startTimeout) {
            this.startTimeout = startTimeout;
            return this;
        }

        /**
         * Starts the server and waits until it serves.
         *
         * @return the running server
         * @throws IllegalArgumentException if persistence is asked for without a directory
         * @throws ServerException if redis-server is not installed (naming the package), ends
         *     before it serves (with its output), or does not serve in time
         */
        public RedisServer start() {
            if (persistence != Persistence.NONE && dir == null) {
                throw new IllegalArgumentException("persistence " + persistence + " needs a dir for the append-only file");
            }
            RedisServer server = new RedisServer(this, port == 0 ? FreePorts.next() : port);
            server.startProcess();
            return server;
        }
    }
}
