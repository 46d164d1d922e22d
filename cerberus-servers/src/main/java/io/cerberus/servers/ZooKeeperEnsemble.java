package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A ZooKeeper ensemble of N {@link ZooKeeperServer} members (3 by default) on loopback ports, each
 * a child JVM with its own data directory, {@code myid} and ports (client, quorum, election). All
 * members are launched before any is awaited, since none serves until a quorum runs; the ensemble
 * is up once every member answers {@code srvr} as leader or follower. Faults go to one member
 * ({@link #member(int)}: kill, pause, resume, restart on the same ports and data, after which it
 * rejoins); {@link #leader()} names the member that says it leads. {@link #heal()} resumes and
 * relaunches every faulted member and waits until all serve again. Not thread-safe.
 */
public final class ZooKeeperEnsemble extends Ensemble<ZooKeeperServer> {
    private ZooKeeperEnsemble(List<ZooKeeperServer> members, Path dir, boolean temporaryDir) {
        super(members, dir, temporaryDir);
    }

    /** @return a builder with the defaults: 3 members, and the defaults of {@link ZooKeeperServer#builder()} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts three members with the defaults of {@link #builder()}.
     *
     * @return the running ensemble
     * @throws ServerException if ZooKeeper is not on this JVM's class path, or a member does not serve in time
     */
    public static ZooKeeperEnsemble start() {
        return builder().start();
    }

    /** @return its engine URI, {@code zk://127.0.0.1:P1,127.0.0.1:P2,...}; add a chroot and query as needed */
    @Override
    public String uri() {
        return "zk://" + connectString();
    }

    /** @return its connect string for a ZooKeeper or Curator client */
    public String connectString() {
        return hostPorts();
    }

    /** @return its {@code srvr} mode: {@code leader} or {@code follower}; empty when it does not serve */
    @Override
    public String role(int index) {
        return member(index).mode().orElse("");
    }

    @Override
    public String toString() {
        return "zookeeper ensemble on " + connectString();
    }

    /**
     * Options of a {@link ZooKeeperEnsemble}, applied to every member. Member N keeps its
     * configuration and data in {@code dir/zkN} and its output in {@code dir/zkN/server.out}; the
     * members, or a restarted member, may take 60 s (scaled) to serve. Not thread-safe.
     */
    public static final class Builder extends GroupOptions<Builder> {
        private final ZooKeeperSettings settings = new ZooKeeperSettings();
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
                throw new IllegalArgumentException("an ensemble needs at least 2 members, was " + size
                        + "; start one standalone server with ZooKeeperServer");
            }
            this.size = size;
            return this;
        }

        /**
         * @param tickTime ZooKeeper's time unit; 200 ms by default. The ensemble's join and
         *     sync limits are 10 s and 2 s in ticks.
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1 ms
         */
        public Builder tickTime(Duration tickTime) {
            settings.tickTime(tickTime);
            return this;
        }

        /**
         * @param min the shortest session a client may ask for; by default two ticks
         * @param max the longest; 60 s by default
         * @return this builder
         * @throws IllegalArgumentException if min is less than 1 ms or max is less than min
         */
        public Builder sessionTimeouts(Duration min, Duration max) {
            settings.sessionTimeouts(min, max);
            return this;
        }

        /**
         * @param forceSync whether transactions are fsynced before they are answered (the default)
         * @return this builder
         */
        public Builder forceSync(boolean forceSync) {
            settings.forceSync(forceSync);
            return this;
        }

        /**
         * @param options each member JVM's options, instead of the small quick-starting default
         * @return this builder
         */
        public Builder jvmOptions(String... options) {
            settings.jvmOptions(options);
            return this;
        }

        /**
         * @param classPath the class path that holds ZooKeeper's server; this JVM's by default
         * @return this builder
         * @throws IllegalArgumentException if it is empty
         */
        public Builder classPath(String classPath) {
            settings.classPath(classPath);
            return this;
        }

        /**
         * Starts every member, then waits until each serves as leader or follower.
         *
         * @return the running ensemble
         * @throws ServerException if ZooKeeper's main class is not on the class path, or a member
         *     ends before it serves (with its output), or does not serve in time
         */
        public ZooKeeperEnsemble start() {
            Path home = home("cerberus-zk-ensemble-");
            List<ZooKeeperServer> members = new ArrayList<>();
            ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(members, home, temporaryHome());
            try {
                int[] clientPorts = new int[size];
                List<String> peers = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    clientPorts[i] = FreePorts.next();
                    peers.add("server." + (i + 1) + "=127.0.0.1:" + FreePorts.next() + ":" + FreePorts.next());
                }
                for (int i = 0; i < size; i++) {
                    Path memberDir = home.resolve("zk" + (i + 1));
                    Path data = memberDir.resolve("data");
                    Directories.write(data.resolve("myid"), Integer.toString(i + 1));
                    Path config = memberDir.resolve("zoo.cfg");
                    List<String> lines = new ArrayList<>(settings.configLines(data, clientPorts[i]));
                    lines.addAll(settings.ensembleLines());
                    lines.addAll(peers);
                    Directories.write(config, String.join("\n", lines) + "\n");
                    Path output = dir() == null ? null : memberDir.resolve("server.out");
                    ZooKeeperServer member = new ZooKeeperServer(
                            clientPorts[i],
                            settings.command(config),
                            LoopbackServer.memberOptions(output, startTimeout()),
                            memberDir,
                            false);
                    members.add(member);
                    member.launch();
                }
                members.forEach(LoopbackServer::awaitServes);
                return ensemble;
            } catch (RuntimeException e) {
                ensemble.close();
                throw e;
            }
        }
    }
}
