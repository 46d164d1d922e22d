package io.cerberus.cli;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code check --server etcd}: a 3-member etcd cluster on loopback ports ({@code etcd} of Debian's
 * etcd-server package), with etcd's default timings (heartbeat 100 ms, election 1 s) and fsync.
 * The clients' lease TTL is the checker's lease in whole seconds, at least 2 s: etcd raises any
 * shorter TTL to 1.5 election timeouts.
 *
 * <p>Each member serves {@code /health} and {@code /metrics} on a port of its own (HTTP requests
 * beside the clients' gRPC connections are kept off the client port). The leader is the member
 * whose metrics say {@code etcd_server_is_leader 1}; a restarted member has rejoined when its
 * {@code /health} is true (it has a leader and serves reads) and its metrics name a leader.
 */
final class CheckEtcdCluster extends EnsembleServers {
    private static final int SIZE = 3;
    private static final Duration START = Duration.ofSeconds(60);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(1)).build();

    private final List<ServerProcess> members;
    private final int[] metricsPorts = new int[SIZE];
    private final Path dir;
    private final Duration lease;
    private int next;
    private int killed = -1;

    private CheckEtcdCluster(List<ServerProcess> members, Path dir, Duration lease) {
        this.members = members;
        this.dir = dir;
        this.lease = lease;
    }

    static CheckEtcdCluster start(Path dir, Duration lease) throws IOException, InterruptedException {
        String etcd = Executables.find("etcd").map(Path::toString).orElseThrow(() -> new IllegalArgumentException(
                "--server etcd needs etcd; install it with: apt-get install etcd-server"));
        int[] clientPorts = new int[SIZE];
        int[] peerPorts = new int[SIZE];
        for (int i = 0; i < SIZE; i++) {
            clientPorts[i] = FreePorts.next();
            peerPorts[i] = FreePorts.next();
        }
        String initialCluster = java.util.stream.IntStream.range(0, SIZE)
                .mapToObj(i -> "m" + (i + 1) + "=http://127.0.0.1:" + peerPorts[i]).collect(Collectors.joining(","));
        List<ServerProcess> members = new ArrayList<>();
        CheckEtcdCluster cluster = new CheckEtcdCluster(members, dir, lease);
        try {
            for (int i = 0; i < SIZE; i++) {
                cluster.metricsPorts[i] = FreePorts.next();
                Path memberDir = Files.createDirectories(dir.resolve("etcd" + (i + 1)));
                String client = "http://127.0.0.1:" + clientPorts[i];
                String peer = "http://127.0.0.1:" + peerPorts[i];
                // --initial-cluster-state new is ignored once the data directory holds a member: a restart rejoins
                List<String> command = List.of(etcd, "--name", "m" + (i + 1), "--data-dir", memberDir.resolve("data").toString(),
                        "--listen-client-urls", client, "--advertise-client-urls", client,
                        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                        "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                        "--initial-cluster-token", "cerberus-check-" + peerPorts[0],
                        "--listen-metrics-urls", "http://127.0.0.1:" + cluster.metricsPorts[i]);
                ServerProcess member = new ServerProcess("etcd member " + (i + 1), command, memberDir.resolve("server.out"),
                        clientPorts[i]);
                members.add(member);
                member.start();
            }
            for (int i = 0; i < SIZE; i++) {
                int index = i;
                members.get(i).await("health", START, () -> cluster.healthy(index));
            }
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    @Override
    public String uri() {
        long ttl = Math.max(2, (lease.toMillis() + 999) / 1000);
        return "etcd://" + members.stream().map(m -> "127.0.0.1:" + m.clientPort()).collect(Collectors.joining(","))
                + "/cerberus-check?ttl=" + ttl;
    }

    /** {@code leader-kill}: the member whose metrics say it leads; {@code server-kill}: the next one in turn, leader or not. */
    @Override
    String kill(String fault) throws InterruptedException {
        int index = switch (fault) {
            case "leader-kill" -> leader();
            case "server-kill" -> next++ % SIZE;
            default -> throw new IllegalArgumentException("--server etcd does not take fault " + fault);
        };
        boolean leading = metric(index, "etcd_server_is_leader").equals("1");
        members.get(index).kill();
        killed = index;
        return "member " + (index + 1) + " (" + (leading ? "leader" : "follower") + ")";
    }

    @Override
    String restart() throws InterruptedException {
        ServerProcess member = members.get(killed);
        member.start();
        member.await("rejoining the cluster", START, () -> healthy(killed) && metric(killed, "etcd_server_has_leader").equals("1"));
        return "member " + (killed + 1) + " rejoined as " + (metric(killed, "etcd_server_is_leader").equals("1") ? "leader" : "follower")
                + ", leader member " + (leader() + 1);
    }

    /** @return the index of the member that says it leads, waiting up to a minute for an election to end */
    private int leader() throws InterruptedException {
        long deadline = System.nanoTime() + START.toNanos();
        while (true) {
            for (int i = 0; i < SIZE; i++) {
                if (members.get(i).alive() && metric(i, "etcd_server_is_leader").equals("1")) {
                    return i;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no etcd member says it leads after " + Durations.format(START)
                        + "; see the members' output in " + dir);
            }
            Thread.sleep(20);
        }
    }

    private boolean healthy(int index) {
        return get(index, "/health").contains("\"health\":\"true\"");
    }

    /** @return the value of a metric without labels, e.g. {@code 1}, empty when the member does not answer */
    private String metric(int index, String name) {
        return get(index, "/metrics").lines().filter(line -> line.startsWith(name + " ")).map(line -> line.substring(name.length() + 1))
                .findFirst().orElse("");
    }

    private String get(int index, String path) {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPorts[index] + path))
                    .timeout(Duration.ofSeconds(2)).build();
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    @Override
    public void close() {
        members.forEach(ServerProcess::close);
    }
}
