package io.cerberus.etcd;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** A real etcd cluster of several members on loopback ports, each with its own data directory. */
final class EtcdCluster implements AutoCloseable {
    private final int[] clientPorts;
    private final int[] peerPorts;
    private final Path[] dataDirs;
    private final ManagedProcess[] members;

    private EtcdCluster(int size) throws IOException {
        clientPorts = new int[size];
        peerPorts = new int[size];
        dataDirs = new Path[size];
        members = new ManagedProcess[size];
        for (int i = 0; i < size; i++) {
            clientPorts[i] = FreePorts.next();
            peerPorts[i] = FreePorts.next();
            dataDirs[i] = Files.createTempDirectory("cerberus-etcd-member-");
        }
    }

    static EtcdCluster start(int size) {
        try {
            EtcdCluster cluster = new EtcdCluster(size);
            for (int i = 0; i < size; i++) {
                cluster.startMember(i);
            }
            for (int i = 0; i < size; i++) {
                try {
                    FreePorts.awaitAccepting(cluster.clientPorts[i], TestTimes.millis(20_000), "etcd member " + i);
                } catch (ServerException e) {
                    ServerException failure = new ServerException(e.getMessage() + "\n" + cluster.members[i].diagnostics(), e);
                    cluster.close();
                    throw failure;
                }
            }
            return cluster;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts (or restarts, on its old data) member {@code i}. */
    void startMember(int i) {
        String initialCluster = java.util.stream.IntStream.range(0, peerPorts.length)
                .mapToObj(m -> "m" + m + "=http://127.0.0.1:" + peerPorts[m]).collect(Collectors.joining(","));
        String client = "http://127.0.0.1:" + clientPorts[i];
        String peer = "http://127.0.0.1:" + peerPorts[i];
        List<String> command = new ArrayList<>(List.of(Executables.require("etcd", "etcd-server").toString(),
                "--name", "m" + i, "--data-dir", dataDirs[i].toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", "cerberus-" + peerPorts[0]));
        members[i] = ManagedProcess.start("etcd-m" + i + "-" + clientPorts[i], command);
    }

    /** Kills member {@code i} with SIGKILL. */
    void kill(int i) {
        members[i].kill(TestTimes.millis(10_000));
    }

    String uri(String query) {
        return "etcd://" + java.util.Arrays.stream(clientPorts).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.joining(","))
                + (query.isEmpty() ? "" : "?" + query);
    }

    @Override
    public void close() {
        for (ManagedProcess member : members) {
            if (member != null) {
                member.close();
            }
        }
        for (Path dir : dataDirs) {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
