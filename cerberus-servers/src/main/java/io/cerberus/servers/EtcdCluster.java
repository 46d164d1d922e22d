package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * An etcd cluster of N {@link EtcdServer} members (3 by default) on loopback ports, each with its
 * own data directory; plain text. All members are launched before any is awaited, since none is
 * healthy until a quorum runs; the cluster is up once every member is. Faults go to one member
 * ({@link #member(int)}: kill, pause, resume, restart on the same ports and data, after which it
 * rejoins); {@link #leader()} names the member whose metrics say it leads. {@link #heal()}
 * resumes and relaunches every faulted member and waits until all are healthy. Not thread-safe.
 */
public final class EtcdCluster extends Ensemble<EtcdServer> {
    private EtcdCluster(List<EtcdServer> members, Path dir, boolean temporaryDir) {
        super(members, dir, temporaryDir);
    }

    /** @return a builder with the defaults: 3 members in a temporary directory */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts three members.
     *
     * @return the running cluster
     * @throws ServerException if etcd is not installed, or a member is not healthy in time
     */
    public static EtcdCluster start() {
        return builder().start();
    }

    /** @return its engine URI, {@code etcd://127.0.0.1:P1,127.0.0.1:P2,...}; add a path and query as needed */
    @Override
    public String uri() {
        return "etcd://" + hostPorts();
    }

    /** @return {@code leader} if its metrics say it leads, {@code follower} if it is healthy; empty otherwise */
    @Override
    public String role(int index) {
        EtcdServer member = member(index);
        if (!member.isRunning() || member.isPaused()) {
            return "";
        }
        return member.isLeader() ? "leader" : member.healthy() ? "follower" : "";
    }

    @Override
    public String toString() {
        return "etcd cluster " + uri();
    }

    /**
     * Options of an {@link EtcdCluster}. Member N keeps its data in {@code dir/etcdN/data} and its
     * output in {@code dir/etcdN/server.out}; the members, or a restarted member, may take 60 s
     * (scaled) to be healthy. Not thread-safe.
     */
    public static final class Builder extends GroupOptions<Builder> {
        private int size = 3;

        private Builder() {
            super(Duration.ofSeconds(60));
        }

        /**
         * @param size how many members; 3 by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 2
         */
        public Builder size(int size) {
            if (size < 2) {
                throw new IllegalArgumentException(
                        "a cluster needs at least 2 members, was " + size + "; start one with EtcdServer");
            }
            this.size = size;
            return this;
        }

        /**
         * Starts every member, then waits until each is healthy.
         *
         * @return the running cluster
         * @throws ServerException if etcd is not installed (naming the package), or a member ends
         *     before it is healthy (with its output), or is not healthy in time
         */
        public EtcdCluster start() {
            Path home = home("cerberus-etcd-cluster-");
            List<EtcdServer> members = new ArrayList<>();
            EtcdCluster cluster = new EtcdCluster(members, home, temporaryHome());
            try {
                int[] clientPorts = new int[size];
                int[] peerPorts = new int[size];
                for (int i = 0; i < size; i++) {
                    clientPorts[i] = FreePorts.next();
                    peerPorts[i] = FreePorts.next();
                }
                String initialCluster = IntStream.range(0, size)
                        .mapToObj(i -> "m" + (i + 1) + "=http://127.0.0.1:" + peerPorts[i])
                        .collect(Collectors.joining(","));
                for (int i = 0; i < size; i++) {
                    Path memberDir = Directories.create(home.resolve("etcd" + (i + 1)));
                    Path output = dir() == null ? null : memberDir.resolve("server.out");
                    EtcdServer member = EtcdServer.member(
                            "m" + (i + 1),
                            clientPorts[i],
                            peerPorts[i],
                            initialCluster,
                            "cerberus-" + peerPorts[0],
                            memberDir.resolve("data"),
                            LoopbackServer.memberOptions(output, startTimeout()));
                    members.add(member);
                    member.launch();
                }
                members.forEach(LoopbackServer::awaitServes);
                return cluster;
            } catch (RuntimeException e) {
                cluster.close();
                throw e;
            }
        }
    }
}
