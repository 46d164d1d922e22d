package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code etcd} member on loopback ports, started by this JVM (never the system service):
 * its client port ({@link #port()}, plain or TLS), a peer port, and a metrics port of its own
 * where {@code /health} and {@code /metrics} are read over plain HTTP whatever the client port
 * speaks. Single when started from {@link #builder()}, a member when an {@link EtcdCluster} starts
 * it. It serves once {@code /health} is true (a member accepts connections before it has a
 * leader). Faults: {@link #kill()}, {@link #pause()}, {@link #resume()}, {@link #restart()} (same
 * ports and data directory: {@code --initial-cluster-state new} is ignored once it holds a member,
 * so a restarted member rejoins). Authentication is not a server option: enable it with
 * {@link #ctl}. A data directory it made is deleted on close. Not thread-safe.
 */
public final class EtcdServer extends LoopbackServer {
    private static final Duration CTL_TIMEOUT = Duration.ofSeconds(20);

    private final int metricsPort;
    private final Path dir;
    private final boolean temporaryDir;
    private final Path certificate;

    private EtcdServer(
            int port,
            List<String> command,
            Options<?> options,
            int metricsPort,
            Path dir,
            boolean temporaryDir,
            Path certificate) {
        super("etcd", port, command, options);
        this.metricsPort = metricsPort;
        this.dir = dir;
        this.temporaryDir = temporaryDir;
        this.certificate = certificate;
    }

    /**
     * A member of a cluster: its ports, its name in {@code initialCluster}, its data directory.
     *
     * @param initialCluster every member's {@code NAME=PEER_URL}, comma-separated
     * @param token the cluster's {@code --initial-cluster-token}
     */
    static EtcdServer member(
            String name,
            int port,
            int peerPort,
            String initialCluster,
            String token,
            Path dataDir,
            Options<?> options) {
        int metricsPort = FreePorts.next();
        return new EtcdServer(
                port,
                command(name, port, peerPort, metricsPort, initialCluster, token, dataDir, null, null),
                options,
                metricsPort,
                dataDir,
                false,
                null);
    }

    private static List<String> command(
            String name,
            int port,
            int peerPort,
            int metricsPort,
            String initialCluster,
            String token,
            Path dataDir,
            Path certificate,
            Path key) {
        String client = (certificate == null ? "http" : "https") + "://127.0.0.1:" + port;
        String peer = "http://127.0.0.1:" + peerPort;
        List<String> command = new ArrayList<>(List.of(
                Executables.require("etcd", "etcd-server").toString(),
                "--name",
                name,
                "--data-dir",
                dataDir.toString(),
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                initialCluster,
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                token,
                "--listen-metrics-urls",
                "http://127.0.0.1:" + metricsPort));
        if (certificate != null) {
            command.addAll(List.of("--cert-file", certificate.toString(), "--key-file", key.toString()));
        }
        return command;
    }

    /** @return a builder with the defaults: free ports, plain text, a temporary data directory */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a single member with the defaults of {@link #builder()}.
     *
     * @return the running server
     * @throws ServerException if etcd is not installed, or does not serve in time
     */
    public static EtcdServer start() {
        return builder().start();
    }

    @Override
    protected String servesWhen() {
        return "say it is healthy on its metrics port " + metricsPort;
    }

    @Override
    protected boolean serves() {
        return healthy();
    }

    /** @return its engine URI, {@code etcd://127.0.0.1:PORT}, or {@code etcds://} with TLS; add a path and query as needed */
    @Override
    public String uri() {
        return (certificate == null ? "etcd://" : "etcds://") + hostPort();
    }

    /** @return its client URL, for an etcd client of the caller's own: {@code http://127.0.0.1:PORT} or {@code https://} */
    public String endpoint() {
        return (certificate == null ? "http://" : "https://") + hostPort();
    }

    /** @return its data directory */
    public Path dir() {
        return dir;
    }

    /** @return whether it answers {@code /health} with true: it runs, has a leader and serves reads */
    public boolean healthy() {
        return EtcdMetrics.get(metricsPort, "/health").contains("\"health\":\"true\"");
    }

    /** @return its Prometheus metrics; empty when it does not answer */
    public String metrics() {
        return EtcdMetrics.get(metricsPort, "/metrics");
    }

    /**
     * @param prefix a counter's name with a space, or with <code>&#123;</code> and its first labels,
     *     e.g. {@code grpc_server_started_total{grpc_method="Txn"}}
     * @return the sum of the values of its lines; 0 when it has none yet (a labelled counter
     *     appears on its first count)
     * @throws ServerException if it does not answer
     */
    public long counter(String prefix) {
        return (long) EtcdMetrics.sum(answeredMetrics(), prefix).orElse(0);
    }

    /**
     * @param name a metric without labels, e.g. {@code etcd_mvcc_db_total_size_in_use_in_bytes}
     * @return its value
     * @throws ServerException if it does not answer, or has no such metric
     */
    public double gauge(String name) {
        return EtcdMetrics.sum(answeredMetrics(), name + " ")
                .orElseThrow(() -> new ServerException(this + " reports no metric " + name));
    }

    /** @return whether it says it leads now ({@code etcd_server_is_leader 1}); false when it does not answer */
    public boolean isLeader() {
        return EtcdMetrics.sum(metrics(), "etcd_server_is_leader ").orElse(0) == 1;
    }

    /** @return whether it knows a leader now ({@code etcd_server_has_leader 1}); false when it does not answer */
    public boolean hasLeader() {
        return EtcdMetrics.sum(metrics(), "etcd_server_has_leader ").orElse(0) == 1;
    }

    /**
     * @return its version, e.g. {@code 3.4.23}, from {@code etcd_server_version}
     * @throws ServerException if it does not answer
     */
    public String version() {
        String label = "etcd_server_version{server_version=\"";
        return answeredMetrics()
                .lines()
                .filter(line -> line.startsWith(label))
                .map(line -> line.substring(label.length(), line.indexOf('"', label.length())))
                .findFirst()
                .orElse("unknown");
    }

    private String answeredMetrics() {
        String metrics = metrics();
        if (metrics.isEmpty()) {
            throw new ServerException(this + " did not answer /metrics on port " + metricsPort
                    + (isRunning() ? "" : "; it is not running"));
        }
        return metrics;
    }

    /**
     * Runs {@code etcdctl} against it (trusting its certificate with TLS), e.g.
     * {@code ctl("user", "add", "root", "--new-user-password=secret")}.
     *
     * @param args etcdctl's arguments after {@code --endpoints}
     * @return its standard output
     * @throws ServerException if etcdctl is not installed, fails (with its standard error), or takes over 20 s (scaled)
     */
    public String ctl(String... args) {
        List<String> command = new ArrayList<>(
                List.of(Executables.require("etcdctl", "etcd-client").toString(), "--endpoints", endpoint()));
        if (certificate != null) {
            command.addAll(List.of("--cacert", certificate.toString()));
        }
        command.addAll(List.of(args));
        return ManagedProcess.run("etcdctl " + String.join(" ", args), command, Timeouts.scaled(CTL_TIMEOUT));
    }

    /** Kills the member (continuing it first if paused), and deletes its data directory if it made it. */
    @Override
    public void close() {
        super.close();
        if (temporaryDir) {
            Directories.deleteQuietly(dir);
        }
    }

    /** Options of a single {@link EtcdServer}. Not thread-safe. */
    public static final class Builder extends LoopbackServer.Options<Builder> {
        private Path certificate;
        private Path key;
        private Path dir;

        private Builder() {
            startTimeout(Timeouts.scaled(Duration.ofSeconds(20)));
        }

        /**
         * Serves clients over TLS on the client port, without asking them for certificates; its
         * engine URI becomes {@code etcds://}.
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
         * @param dir its data directory, kept after close; by default a temporary one deleted on close
         * @return this builder
         */
        public Builder dir(Path dir) {
            this.dir = dir;
            return this;
        }

        /**
         * Starts the member and waits until it is healthy.
         *
         * @return the running server
         * @throws IllegalArgumentException if only one of certificate and key is given
         * @throws ServerException if etcd is not installed (naming the package), ends before it
         *     serves (with its output), or does not serve in time
         */
        public EtcdServer start() {
            if ((certificate == null) != (key == null)) {
                throw new IllegalArgumentException(
                        "TLS needs both a certificate and a key, was " + certificate + " and " + key);
            }
            int port = portOrFree();
            int peerPort = FreePorts.next();
            int metricsPort = FreePorts.next();
            Path data = dir == null ? Directories.createTemp(null, "cerberus-etcd-") : dir;
            try {
                List<String> command = command(
                        "member",
                        port,
                        peerPort,
                        metricsPort,
                        "member=http://127.0.0.1:" + peerPort,
                        "cerberus-" + peerPort,
                        data,
                        certificate,
                        key);
                EtcdServer server = new EtcdServer(port, command, this, metricsPort, data, dir == null, certificate);
                server.startProcess();
                return server;
            } catch (RuntimeException e) {
                if (dir == null) {
                    Directories.deleteQuietly(data);
                }
                throw e;
            }
        }
    }
}
