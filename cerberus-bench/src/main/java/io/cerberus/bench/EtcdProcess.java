package io.cerberus.bench;

import io.cerberus.servers.Await;
import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The etcd server of a run: a single member on free loopback ports with a temporary data directory
 * (as cerberus-etcd's tests start it, EtcdServer), never the system service.
 */
final class EtcdProcess implements AutoCloseable {
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
                Await.until("etcd on port " + clientPort + " to be healthy", Duration.ofSeconds(60), process,
                        () -> server.get("/health").contains("\"true\""));
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A GET of this path on the metrics port, over a plain blocking socket. The bench reads the
     * metrics around every measured slice; {@link java.net.http.HttpClient} would run its
     * {@code CompletableFuture} chains and NIO selector code in this JVM each time, the same JDK code
     * the peers' clients run hot, and the JIT compiler threw the peers' compiled code for it away
     * (seen as waves of deoptimisations after each read, and recompiling in the next slice).
     *
     * @return the body, empty when the request fails
     */
    private String get(String path) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), metricsPort), 2000);
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int status = response.indexOf(' ') + 1;
            int body = response.indexOf("\r\n\r\n");
            return response.startsWith("HTTP/1.") && response.startsWith("200 ", status) && body >= 0 ? response.substring(body + 4) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** @return the sum of the values of the lines of {@code text} that start with {@code prefix}; NaN when none does */
    static double sum(String text, String prefix) {
        double sum = Double.NaN;
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('\n', start);
            if (end < 0) {
                end = text.length();
            }
            if (text.startsWith(prefix, start)) {
                sum = (Double.isNaN(sum) ? 0 : sum) + Double.parseDouble(text.substring(text.lastIndexOf(' ', end - 1) + 1, end).strip());
            }
            start = end + 1;
        }
        return sum;
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
            String first = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
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
        double received = sum(get("/metrics"), "grpc_server_msg_received_total");
        return Double.isNaN(received) ? 0 : (long) received;
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
        double value = sum(get("/metrics"), name + " ");
        if (Double.isNaN(value)) {
            throw new IllegalStateException("etcd on port " + clientPort + " reports no metric " + name);
        }
        return (long) value;
    }

    @Override
    public void close() {
        process.close();
        TempDirectory.delete(dataDir);
    }
}
