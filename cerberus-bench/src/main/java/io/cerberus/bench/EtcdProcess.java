package io.cerberus.bench;

import io.cerberus.testkit.Executables;
import io.cerberus.testkit.FreePorts;
import io.cerberus.testkit.ManagedProcess;
import io.cerberus.testkit.Poll;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The etcd server of a run: a single member on free loopback ports with a temporary data directory
 * (as cerberus-etcd's tests start it, EtcdServer), never the system service.
 */
final class EtcdProcess implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final int clientPort;
    private final int metricsPort;
    private final Path dataDir;
    private final ManagedProcess process;

    private EtcdProcess(int clientPort, int metricsPort, Path dataDir, ManagedProcess process) {
        this.clientPort = clientPort;
        this.metricsPort = metricsPort;
        this.dataDir = dataDir;
        this.process = process;
    }

    static EtcdProcess start() {
        try {
            int clientPort = FreePorts.next();
            int peerPort = FreePorts.next();
            int metricsPort = FreePorts.next();
            Path dataDir = Files.createTempDirectory("cerberus-bench-etcd-");
            String client = "http://127.0.0.1:" + clientPort;
            String peer = "http://127.0.0.1:" + peerPort;
            ManagedProcess process = ManagedProcess.start("etcd-" + clientPort, List.of(
                    Executables.require("etcd", "etcd-server").toString(), "--name", "member", "--data-dir", dataDir.toString(),
                    "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
                    "--initial-advertise-peer-urls", peer, "--initial-cluster", "member=" + peer, "--initial-cluster-state", "new",
                    // metrics and health on a port of their own, apart from the measured gRPC connections
                    "--listen-metrics-urls", "http://127.0.0.1:" + metricsPort));
            EtcdProcess server = new EtcdProcess(clientPort, metricsPort, dataDir, process);
            // the member accepts connections before it has elected itself; /health says when it serves
            try {
                Poll.until("etcd on port " + clientPort + " to be healthy", Duration.ofSeconds(60),
                        () -> server.get("/health").contains("\"true\""));
            } catch (AssertionError e) {
                IllegalStateException failure = new IllegalStateException(e.getMessage() + process.diagnostics(), e);
                server.close();
                throw failure;
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the body of a GET of this path on the metrics port, empty when it fails */
    private String get(String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    String endpoint() {
        return "http://127.0.0.1:" + clientPort;
    }

    String uri() {
        return "etcd://127.0.0.1:" + clientPort;
    }

    String version() {
        try {
            Process version = new ProcessBuilder(Executables.require("etcd", "etcd-server").toString(), "--version")
                    .redirectErrorStream(true).start();
            String first = new String(version.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
                    .findFirst().orElse("");
            version.waitFor();
            return first.startsWith("etcd Version:") ? "etcd " + first.substring("etcd Version:".length()).strip() : "etcd (version unknown)";
        } catch (IOException e) {
            return "etcd (version unknown)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "etcd (version unknown)";
        }
    }

    /** @return the gRPC messages the server has received (unary requests, and each message on a stream) */
    long messagesReceived() {
        return get("/metrics").lines().filter(line -> line.startsWith("grpc_server_msg_received_total"))
                .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    /** @return the keys in the store now (every prefix: the peers' locks and anything else) */
    long keys() {
        return gauge("etcd_debugging_mvcc_keys_total");
    }

    /** @return the bytes of the backend database in use (freed pages excluded; revisions kept until compaction count) */
    long bytesInUse() {
        return gauge("etcd_mvcc_db_total_size_in_use_in_bytes");
    }

    private long gauge(String name) {
        return get("/metrics").lines().filter(line -> line.startsWith(name + " ")).findFirst()
                .map(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .orElseThrow(() -> new IllegalStateException("etcd on port " + clientPort + " reports no metric " + name));
    }

    @Override
    public void close() {
        process.close();
        TempDirectory.delete(dataDir);
    }
}
