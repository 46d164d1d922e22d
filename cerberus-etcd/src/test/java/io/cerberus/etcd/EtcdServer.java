package io.cerberus.etcd;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real single-member etcd on free loopback ports with a temporary data directory, started by a
 * test (never the system service), and {@code etcdctl} against it.
 */
final class EtcdServer implements AutoCloseable {
    private final int clientPort;
    private final int peerPort;
    private final Path dataDir;
    private final Path certificate;
    private final Path key;
    private ManagedProcess process;

    private EtcdServer(int clientPort, int peerPort, Path dataDir, Path certificate, Path key) {
        this.clientPort = clientPort;
        this.peerPort = peerPort;
        this.dataDir = dataDir;
        this.certificate = certificate;
        this.key = key;
    }

    /** @return a started etcd */
    static EtcdServer start() {
        return start(null, null);
    }

    /**
     * @param certificate PEM certificate of the server, or null for plain text
     * @param key PEM private key of the server
     * @return a started etcd that speaks TLS to clients when a certificate is given
     */
    static EtcdServer start(Path certificate, Path key) {
        try {
            EtcdServer server = new EtcdServer(FreePorts.next(), FreePorts.next(), Files.createTempDirectory("cerberus-etcd-"),
                    certificate, key);
            server.startProcess();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void startProcess() {
        String client = (certificate == null ? "http" : "https") + "://127.0.0.1:" + clientPort;
        String peer = "http://127.0.0.1:" + peerPort;
        List<String> command = new ArrayList<>(List.of(Executables.require("etcd", "etcd-server").toString(),
                "--name", "member", "--data-dir", dataDir.toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "member=" + peer, "--initial-cluster-state", "new"));
        if (certificate != null) {
            command.addAll(List.of("--cert-file", certificate.toString(), "--key-file", key.toString()));
        }
        process = ManagedProcess.start("etcd-" + clientPort, command);
        FreePorts.awaitAccepting(clientPort, TestTimes.millis(20_000), "etcd");
        // the member accepts connections before it has elected itself; wait until it answers
        ctl("endpoint", "health");
    }

    /** @return the client URL, for a jetcd client of the test's own */
    String endpoint() {
        return (certificate == null ? "http" : "https") + "://127.0.0.1:" + clientPort;
    }

    String uri(String query) {
        return "etcd://127.0.0.1:" + clientPort + (query.isEmpty() ? "" : "?" + query);
    }

    /**
     * Runs etcdctl against this server.
     *
     * @param args the etcdctl arguments
     * @return its standard output
     */
    String ctl(String... args) {
        List<String> command = new ArrayList<>(List.of(Executables.require("etcdctl", "etcd-client").toString(),
                "--endpoints", (certificate == null ? "" : "https://") + "127.0.0.1:" + clientPort));
        if (certificate != null) {
            command.addAll(List.of("--cacert", certificate.toString()));
        }
        command.addAll(List.of(args));
        try {
            Process ctl = new ProcessBuilder(command).redirectErrorStream(true).start();
            ctl.getOutputStream().close();
            String output = new String(ctl.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!ctl.waitFor(TestTimes.millis(20_000).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS) || ctl.exitValue() != 0) {
                throw new IllegalStateException("etcdctl " + String.join(" ", args) + " failed: " + output);
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * @param prefix the start of a line of the server's Prometheus metrics, up to the labels wanted
     * @return the sum of the values of the lines that start so
     */
    long metric(String prefix) {
        try {
            java.net.http.HttpResponse<String> reply = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + clientPort + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            return reply.body().lines().filter(line -> line.startsWith(prefix))
                    .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        process.close();
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
