package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A Redis Sentinel deployment on loopback: a primary, its replicas and Sentinels that watch them
 * (three by default, quorum a majority), with small timeouts so a failover takes seconds. It is
 * ready once every replica is in sync and every Sentinel knows every replica and every other
 * Sentinel, so a failover can happen. {@link #primary()} is whichever node the Sentinels name now;
 * {@link #failover()} asks them for one, and after a test kills the primary
 * {@link #awaitNewPrimary} waits for theirs; {@link #cutReplicasOff()} first makes the next writes
 * reach the primary alone, so that such a failover loses them. Invariants: {@link #nodes()} keeps its order (node 1
 * was the first primary) and its ports; a killed node comes back on its port as a replica of the
 * current primary, or as the primary if the Sentinels still name it ({@link #restartAsReplica},
 * {@link #heal()}), in a new {@link RedisServer} that replaces it in {@link #nodes()}. A Sentinel rewrites its configuration file with an fsync at each
 * step of a failover, and one whose timer runs 2 s late (a slow disk, a loaded machine) stops failing over for 30 s
 * (TILT mode); so the files are in memory ({@code /dev/shm}) where there is one, and deleted on
 * close. Not thread-safe: one test or one fault loop drives it.
 */
public final class RedisSentinel implements Deployment {
    private final Builder options;
    private final Path workDir;
    private final boolean temporaryWorkDir;
    private final Path configDir;
    private final List<RedisServer> nodes = new ArrayList<>();
    private final List<RedisServer> sentinels = new ArrayList<>();

    private RedisSentinel(Builder options, Path workDir, boolean temporaryWorkDir, Path configDir) {
        this.options = options;
        this.workDir = workDir;
        this.temporaryWorkDir = temporaryWorkDir;
        this.configDir = configDir;
    }

    /** @return a builder with the defaults: one replica, three Sentinels, no persistence */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a deployment with the defaults of {@link #builder()}.
     *
     * @return the running deployment
     * @throws ServerException if a server does not come up, or the Sentinels do not find each other, in time
     */
    public static RedisSentinel start() {
        return builder().start();
    }

    private void startAll() {
        nodes.add(startNode(1, null));
        for (int i = 2; i <= 1 + options.replicas; i++) {
            nodes.add(startNode(i, nodes.get(0)));
        }
        awaitReplicasInSync(nodes.get(0));
        for (int i = 1; i <= options.sentinels; i++) {
            sentinels.add(startSentinel(i));
        }
        // a failover needs a quorum that knows the replicas and a majority of Sentinels that know each other
        await(
                "the Sentinels to find the replicas and each other",
                options.awaitTimeout,
                () -> sentinels.stream()
                        .allMatch(sentinel -> answers(sentinel).knows(options.replicas, options.sentinels - 1)));
    }

    /** Starts node {@code number} on a free port (or its old one), as a replica of {@code primary} if not null. */
    private RedisServer startNode(int number, RedisServer primary) {
        return startNode(number, 0, primary);
    }

    private RedisServer startNode(int number, int port, RedisServer primary) {
        Path dir = Directories.create(workDir.resolve("node" + number));
        // a primary waits 5 s by default before it streams a full copy to a new replica, for more replicas to join in
        RedisServer.Builder node = RedisServer.builder()
                .port(port)
                .persistence(options.persistence)
                .dir(dir)
                .output(dir.resolve("server.out"))
                .startTimeout(options.startTimeout())
                .args("--repl-diskless-sync-delay", "0");
        if (primary != null) {
            node.args("--replicaof", "127.0.0.1", Integer.toString(primary.port()));
        }
        return node.start();
    }

    private RedisServer startSentinel(int number) {
        Path dir = Directories.create(workDir.resolve("sentinel" + number));
        Path configDir = Directories.create(this.configDir == null ? dir : this.configDir.resolve("sentinel" + number));
        String name = options.masterName;
        Path config;
        try {
            config = Files.writeString(
                    configDir.resolve("sentinel.conf"),
                    String.join(
                            "\n",
                            "sentinel monitor " + name + " 127.0.0.1 "
                                    + nodes.get(0).port() + " " + options.quorum(),
                            "sentinel down-after-milliseconds " + name + " " + options.downAfter.toMillis(),
                            "sentinel failover-timeout " + name + " " + options.failoverTimeout.toMillis(),
                            "sentinel parallel-syncs " + name + " 1",
                            ""));
        } catch (IOException e) {
            throw new ServerException(
                    "could not write the configuration of Sentinel " + number + " in " + configDir + ": " + e, e);
        }
        return RedisServer.builder()
                .sentinel(config)
                .dir(configDir)
                .output(dir.resolve("server.out"))
                .startTimeout(options.startTimeout())
                .start();
    }

    /** @return {@code redis-sentinel://127.0.0.1:S1,127.0.0.1:S2,...#MASTER}: the Sentinels and the name they know the primary by */
    @Override
    public String uri() {
        return "redis-sentinel://"
                + sentinels.stream().map(RedisServer::hostPort).collect(Collectors.joining(",")) + "#"
                + options.masterName;
    }

    /** @return the name the Sentinels know the primary by */
    public String masterName() {
        return options.masterName;
    }

    /** @return the data servers, node 1 (the first primary) first; a node restarted as a replica is the new server */
    public List<RedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /** @return the Sentinels */
    public List<RedisServer> sentinels() {
        return List.copyOf(sentinels);
    }

    /**
     * @return the node the first Sentinel that answers names as primary now
     * @throws ServerException if no Sentinel answers, or one names a server that is none of these nodes
     */
    public RedisServer primary() {
        for (RedisServer sentinel : sentinels) {
            Optional<Integer> port = primaryPort(sentinel);
            if (port.isPresent()) {
                return node(port.get());
            }
        }
        throw new ServerException("no Sentinel names a primary for " + options.masterName + "; " + state());
    }

    private RedisServer node(int port) {
        return nodes.stream()
                .filter(node -> node.port() == port)
                .findFirst()
                .orElseThrow(() -> new ServerException(
                        "the Sentinels name a primary on port " + port + ", which is none of " + nodes));
    }

    /**
     * Waits until every Sentinel names a primary other than {@code old}, say after a test killed
     * or paused it.
     *
     * @param old the primary before
     * @return the new primary
     * @throws ServerException if the Sentinels do not agree on another one within the await timeout
     */
    public RedisServer awaitNewPrimary(RedisServer old) {
        int[] port = new int[1];
        await("the Sentinels to promote a replica of " + old, options.awaitTimeout, () -> {
            port[0] = sentinels.stream()
                    .map(this::primaryPort)
                    .flatMap(Optional::stream)
                    .findFirst()
                    .orElse(old.port());
            return port[0] != old.port()
                    && sentinels.stream()
                            .allMatch(sentinel -> primaryPort(sentinel).orElse(-1) == port[0]);
        });
        return node(port[0]);
    }

    /**
     * Asks the Sentinels for a failover ({@code SENTINEL FAILOVER}), the primary staying up, and
     * waits until every Sentinel names the promoted replica.
     *
     * @return the new primary
     * @throws ServerException if they do not fail over within the await timeout
     */
    public RedisServer failover() {
        RedisServer old = primary();
        RespQuery.send(sentinels.get(0).port(), "SENTINEL", "FAILOVER", options.masterName);
        return awaitNewPrimary(old);
    }

    /**
     * Cuts every replica off the primary's replication stream while all stay up and answer the
     * Sentinels, so that what the primary is written from then on reaches no replica and a failover
     * loses it: each replica is given a {@code masterauth} that the primary, which has no password,
     * refuses (so the replica's reconnects fail their {@code AUTH}, once a second), then the primary
     * closes its replicas' links ({@code CLIENT KILL TYPE replica}). A Sentinel still promotes such a
     * replica while its link has been down less than ten down-after periods longer than the primary.
     * Undo with {@link #reconnectReplicas()}.
     *
     * @return the primary, now without replicas
     * @throws ServerException if the primary still has a replica connected, or a replica does not
     *     report its link down, within the await timeout
     */
    public RedisServer cutReplicasOff() {
        RedisServer primary = primary();
        List<RedisServer> replicas =
                nodes.stream().filter(node -> node != primary).toList();
        for (RedisServer replica : replicas) {
            if (RespQuery.send(replica.port(), "CONFIG", "SET", "masterauth", Passwords.random())
                    .isEmpty()) {
                throw new ServerException("could not set masterauth on the replica " + replica);
            }
        }
        await(
                "the primary " + primary + " to have no replica connected, and each replica its link down",
                options.awaitTimeout,
                () -> {
                    RespQuery.send(primary.port(), "CLIENT", "KILL", "TYPE", "replica");
                    return RespQuery.text(primary.port(), "INFO", "replication").contains("connected_slaves:0")
                            && replicas.stream()
                                    .allMatch(replica -> RespQuery.text(replica.port(), "INFO", "replication")
                                            .contains("master_link_status:down"));
                });
        return primary;
    }

    /**
     * Lets every running node take its primary's stream again: clears the {@code masterauth} that
     * {@link #cutReplicasOff()} set (a replica reconnects within a second).
     *
     * @throws ServerException if a running node refuses the setting
     */
    public void reconnectReplicas() {
        for (RedisServer node : nodes) {
            if (node.isRunning()
                    && RespQuery.send(node.port(), "CONFIG", "SET", "masterauth", "")
                            .isEmpty()) {
                throw new ServerException("could not clear masterauth on " + node);
            }
        }
    }

    /**
     * Starts a killed node again on its port as a replica of the current primary, and waits until
     * it is in sync and every Sentinel lists it as an up replica (so a next failover may promote
     * it).
     *
     * @param killed one of {@link #nodes()}, no longer running
     * @return the new server on its port, which replaces it in {@link #nodes()}
     * @throws IllegalArgumentException if it is not one of the nodes, still runs, or is still the primary
     * @throws ServerException if it does not come up, or is not in sync, within the await timeout
     */
    public RedisServer restartAsReplica(RedisServer killed) {
        int index = nodes.indexOf(killed);
        if (index < 0 || killed.isRunning()) {
            throw new IllegalArgumentException("restartAsReplica takes a killed node of this deployment, was " + killed
                    + (index < 0 ? " (not a node)" : " (running)"));
        }
        RedisServer primary = primary();
        if (primary == killed) {
            throw new IllegalArgumentException("the Sentinels still name " + killed
                    + " primary: await a new one (awaitNewPrimary) before" + " restarting it as a replica");
        }
        killed.close();
        RedisServer restarted = startNode(index + 1, killed.port(), primary);
        nodes.set(index, restarted);
        awaitReplicated();
        return restarted;
    }

    /**
     * Waits until every replica of the current primary is in sync with it and every Sentinel lists
     * every replica as up: flags {@code slave} only, and the replica itself says it is one.
     *
     * @throws ServerException if that does not happen within the await timeout
     */
    public void awaitReplicated() {
        await("every replica to be in sync and every Sentinel to see it up", options.awaitTimeout, () -> {
            RedisServer primary;
            try {
                primary = primary();
            } catch (ServerException e) {
                return false;
            }
            return replicasInSync(primary)
                    && sentinels.stream()
                            .allMatch(sentinel -> nodes.stream()
                                    .filter(node -> node != primary)
                                    .allMatch(replica -> answers(sentinel).listsUp(replica.port())));
        });
    }

    private void awaitReplicasInSync(RedisServer primary) {
        await("the replicas to be in sync with " + primary, options.awaitTimeout, () -> replicasInSync(primary));
    }

    private boolean replicasInSync(RedisServer primary) {
        return RespQuery.text(primary.port(), "INFO", "replication").contains("connected_slaves:" + options.replicas)
                && nodes.stream()
                        .filter(node -> node != primary)
                        .allMatch(replica -> RespQuery.text(replica.port(), "INFO", "replication")
                                .contains("master_link_status:up"));
    }

    private SentinelAnswers answers(RedisServer sentinel) {
        return new SentinelAnswers(sentinel.port(), options.masterName);
    }

    private Optional<Integer> primaryPort(RedisServer sentinel) {
        return answers(sentinel).primaryPort();
    }

    /**
     * @return what each Sentinel says, for messages: whether it answers, its TILT flag, the primary
     *     it names and its replicas' ports and flags
     */
    public String state() {
        List<String> said = new ArrayList<>();
        for (int i = 0; i < sentinels.size(); i++) {
            said.add("sentinel" + (i + 1) + " " + answers(sentinels.get(i)).describe());
        }
        return String.join("; ", said);
    }

    /**
     * Resumes paused Sentinels and nodes, starts killed Sentinels again and killed nodes as
     * replicas of the current primary (as the primary again if the Sentinels still name it), and
     * waits until the replicas are in sync and seen by every Sentinel.
     *
     * @throws ServerException if that does not happen within the await timeout
     */
    @Override
    public void heal() {
        sentinels.forEach(RedisServer::heal);
        nodes.stream().filter(RedisServer::isPaused).forEach(RedisServer::resume);
        for (RedisServer node : List.copyOf(nodes)) {
            if (!node.isRunning()) {
                RedisServer primary = primary();
                int index = nodes.indexOf(node);
                node.close();
                nodes.set(index, startNode(index + 1, node.port(), primary == node ? null : primary));
            }
        }
        awaitReplicated();
    }

    @Override
    public void close() {
        sentinels.forEach(RedisServer::close);
        nodes.forEach(RedisServer::close);
        Directories.deleteQuietly(configDir);
        if (temporaryWorkDir) {
            Directories.deleteQuietly(workDir);
        }
    }

    /** Waits for a condition of the deployment; a timeout's message says what each Sentinel says. */
    private void await(String what, Duration timeout, BooleanSupplier condition) {
        try {
            Await.until(what, timeout, condition);
        } catch (ServerException e) {
            throw new ServerException(e.getMessage() + "; " + state(), e);
        }
    }

    @Override
    public String toString() {
        return "Redis Sentinel deployment " + uri();
    }

    /**
     * Options of a {@link RedisSentinel}; each has the default the tests and {@code cerberus check}
     * want. Node N keeps its data and output in {@code dir/nodeN}, Sentinel N its output in
     * {@code dir/sentinelN}; each start may take 10 s (scaled). Not thread-safe.
     */
    public static final class Builder extends GroupOptions<Builder> {
        private int replicas = 1;
        private int sentinels = 3;
        private String masterName = "locks";
        private Duration downAfter = Duration.ofSeconds(2);
        private Duration failoverTimeout = Duration.ofSeconds(2);
        private RedisServer.Persistence persistence = RedisServer.Persistence.NONE;
        private Duration awaitTimeout = Timeouts.scaled(Duration.ofSeconds(60));

        private Builder() {
            super(Duration.ofSeconds(10));
        }

        /**
         * @param replicas replicas of the primary; 1 by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder replicas(int replicas) {
            if (replicas < 1) {
                throw new IllegalArgumentException(
                        "a Sentinel deployment needs at least 1 replica to fail over to, was " + replicas);
            }
            this.replicas = replicas;
            return this;
        }

        /**
         * @param sentinels how many Sentinels watch the primary; 3 by default; the quorum is a majority of them
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder sentinels(int sentinels) {
            if (sentinels < 1) {
                throw new IllegalArgumentException("a Sentinel deployment needs at least 1 Sentinel, was " + sentinels);
            }
            this.sentinels = sentinels;
            return this;
        }

        /**
         * @param masterName the name the Sentinels know the primary by; {@code locks} by default
         * @return this builder
         * @throws IllegalArgumentException if it is empty or has characters other than letters, digits, {@code -} and {@code _}
         */
        public Builder masterName(String masterName) {
            if (masterName == null || !masterName.matches("[A-Za-z0-9_-]+")) {
                throw new IllegalArgumentException(
                        "master name must be letters, digits, - and _, was '" + masterName + "'");
            }
            this.masterName = masterName;
            return this;
        }

        /**
         * A Sentinel counts a new link (to a primary it just promoted) as waiting for an answer from
         * the start but sends its first PING only after 1 s; with 1 s here it takes a primary that
         * answers that PING a few ms late for down, and fails it over while it still takes writes.
         *
         * @param downAfter how long the primary may not answer before the Sentinels think it down
         *     ({@code down-after-milliseconds}); 2 s by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1 ms
         */
        public Builder downAfter(Duration downAfter) {
            if (downAfter.toMillis() < 1) {
                throw new IllegalArgumentException("downAfter must be at least 1ms, was " + downAfter);
            }
            this.downAfter = downAfter;
            return this;
        }

        /**
         * @param failoverTimeout the Sentinels' {@code failover-timeout}: how long a failover may
         *     take before another is tried; 2 s by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1 ms
         */
        public Builder failoverTimeout(Duration failoverTimeout) {
            if (failoverTimeout.toMillis() < 1) {
                throw new IllegalArgumentException("failoverTimeout must be at least 1ms, was " + failoverTimeout);
            }
            this.failoverTimeout = failoverTimeout;
            return this;
        }

        /**
         * @param persistence what each data node keeps across a kill; none by default. With
         *     {@link RedisServer.Persistence#AOF_ALWAYS} give a {@link #dir}.
         * @return this builder
         */
        public Builder persistence(RedisServer.Persistence persistence) {
            this.persistence = persistence;
            return this;
        }

        /**
         * @param awaitTimeout how long a wait for the deployment (replicas in sync, a promotion) may
         *     take; 60 s scaled by default: a Sentinel in TILT mode does nothing for 30 s
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder awaitTimeout(Duration awaitTimeout) {
            if (awaitTimeout.isNegative() || awaitTimeout.isZero()) {
                throw new IllegalArgumentException("awaitTimeout must be positive, was " + awaitTimeout);
            }
            this.awaitTimeout = awaitTimeout;
            return this;
        }

        /** @return a copy, so that a deployment keeps the options it was started with when this builder changes */
        private Builder copy() {
            Builder copy = new Builder();
            copy.replicas = replicas;
            copy.sentinels = sentinels;
            copy.masterName = masterName;
            copy.downAfter = downAfter;
            copy.failoverTimeout = failoverTimeout;
            copy.persistence = persistence;
            copy.copyGroupOptions(this);
            copy.awaitTimeout = awaitTimeout;
            return copy;
        }

        private int quorum() {
            return sentinels / 2 + 1;
        }

        /**
         * Starts the primary, the replicas and the Sentinels, and waits until a failover can
         * happen; if anything fails, stops what was started.
         *
         * @return the running deployment
         * @throws IllegalArgumentException if persistence is asked for without a directory
         * @throws ServerException if a server does not come up, or the Sentinels do not find the
         *     replicas and each other, in time
         */
        public RedisSentinel start() {
            if (persistence != RedisServer.Persistence.NONE && dir() == null) {
                throw new IllegalArgumentException(
                        "persistence " + persistence + " needs a dir for the append-only files");
            }
            Path workDir = home("cerberus-redis-sentinel-");
            Path memory = Directories.memory();
            RedisSentinel deployment = new RedisSentinel(
                    copy(),
                    workDir,
                    temporaryHome(),
                    memory == null ? null : Directories.createTemp(memory, "cerberus-sentinel-"));
            try {
                deployment.startAll();
            } catch (RuntimeException e) {
                deployment.close();
                throw e;
            }
            return deployment;
        }
    }
}
