package io.cerberus.cli;

import io.cerberus.servers.RespQuery;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * {@code cerberus check --server sentinel}: a Redis primary, one replica and three Sentinels
 * (quorum 2) on loopback ports, with small timeouts (a primary is down after 2 s without an answer,
 * failover timeout 2 s) so a failover takes seconds. Its fault, {@code failover}, kills the
 * current primary with SIGKILL, waits until the Sentinels name the replica as primary, and after
 * {@code --server-down} starts the old primary again as a replica of the new one. Redis replicates
 * asynchronously: a grant the killed primary had not yet sent to its replica is not on the
 * promoted one — what the checker then sees is the point of the exercise. A failover first waits
 * until no Sentinel is in TILT mode (see {@link #WITHIN}).
 */
final class SentinelServers implements LockServer {
    /** The name the Sentinels know the primary by. */
    static final String MASTER = "locks";
    /**
     * How long a step may take. A Sentinel whose timer ran more than 2 s late (a stalled or overloaded machine) enters
     * TILT mode for 30 s, in which it neither fails over nor clears a replica's down flag; a step is given that long and
     * 30 s more.
     */
    private static final Duration WITHIN = Duration.ofSeconds(60);
    /** How long a primary may not answer the Sentinels before they fail it over. */
    private static final int DOWN_AFTER_MS = 2000;
    /** A primary waits 5 s by default before it streams a full copy to a new replica, for more replicas to join in. */
    private static final List<String> NO_SYNC_DELAY = List.of("--repl-diskless-sync-delay", "0");

    private final List<CheckServer> nodes;
    private final List<CheckServer> sentinels;
    /**
     * The Sentinels' configuration epoch as of the last failover made here (0: none yet). A higher one at the next
     * failover means the Sentinels failed over on their own in between.
     */
    private long expectedEpoch;

    private SentinelServers(List<CheckServer> nodes, List<CheckServer> sentinels) {
        this.nodes = nodes;
        this.sentinels = sentinels;
    }

    static SentinelServers start(Path dir, boolean persistent) throws IOException, InterruptedException {
        List<CheckServer> nodes = new ArrayList<>();
        List<CheckServer> sentinels = new ArrayList<>();
        SentinelServers servers = new SentinelServers(nodes, sentinels);
        try {
            nodes.add(CheckServer.startRedis(dir.resolve("node1"), persistent, NO_SYNC_DELAY));
            int primary = nodes.get(0).port();
            nodes.add(CheckServer.startRedis(dir.resolve("node2"), persistent, replicaOf(primary)));
            servers.awaitReplicaInSync(nodes.get(0), nodes.get(1));
            for (int i = 1; i <= 3; i++) {
                sentinels.add(CheckServer.startSentinel(dir.resolve("sentinel" + i), List.of(
                        "sentinel monitor " + MASTER + " 127.0.0.1 " + primary + " 2",
                        // not 1 s: a Sentinel counts a new link (to a primary it just promoted) as waiting for an
                        // answer from the start but sends its first PING only after 1 s, so with 1 s it took a
                        // primary that answered that PING a few ms late for down, and failed it over while it
                        // still took writes (seen in most runs on a loaded machine, and lost grants there)
                        "sentinel down-after-milliseconds " + MASTER + " " + DOWN_AFTER_MS,
                        "sentinel failover-timeout " + MASTER + " 2000",
                        "sentinel parallel-syncs " + MASTER + " 1")));
            }
            // a failover needs a quorum that knows the replica and a majority of Sentinels that know each other
            servers.await("the Sentinels to find the replica and each other", () -> sentinels.stream().allMatch(sentinel -> {
                List<String> master = RespQuery.send(sentinel.port(), "SENTINEL", "MASTER", MASTER);
                return field(master, "num-slaves").equals("1") && field(master, "num-other-sentinels").equals("2");
            }));
        } catch (IOException | InterruptedException | RuntimeException e) {
            servers.close();
            throw e;
        }
        return servers;
    }

    @Override
    public String uri() {
        return "redis-sentinel://" + sentinels.stream().map(CheckServer::hostPort).collect(Collectors.joining(",")) + "#" + MASTER;
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws IOException, InterruptedException {
        // a Sentinel in TILT mode does not fail over, and afterwards it will not promote a replica cut off for that long
        if (sentinels.stream().anyMatch(SentinelServers::inTilt)) {
            long since = System.nanoTime();
            await("the Sentinels to leave TILT mode", () -> sentinels.stream().noneMatch(SentinelServers::inTilt));
            record.accept("tilt-wait: " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since) + "ms until the Sentinels left"
                    + " TILT mode, which a Sentinel enters for 30 s when its timer runs over 2 s late");
        }
        int oldPort = primaryPort();
        CheckServer old = node(oldPort);
        long epoch = configEpoch();
        if (epoch != expectedEpoch) {
            // a live primary that did not answer the Sentinels in time (a stalled machine) is failed over while it still
            // takes writes from the clients connected to it; what it takes until it is made a replica is lost
            record.accept("unplanned-failover: the Sentinels failed over on their own (configuration epoch " + expectedEpoch + " -> "
                    + epoch + "), node" + number(old) + " is primary");
        }
        record.accept("failover: SIGKILL to the primary, node" + number(old));
        long killed = System.nanoTime();
        old.kill();
        int[] newPort = new int[1];
        await("the Sentinels to promote the replica", () -> {
            newPort[0] = primaryPort();
            return newPort[0] != oldPort && sentinels.stream().allMatch(sentinel -> masterPort(sentinel) == newPort[0]);
        });
        CheckServer promoted = node(newPort[0]);
        expectedEpoch = configEpoch();
        long promotedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        record.accept("promoted node" + number(promoted) + " after " + promotedAfter + "ms");
        long rest = down.toMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        if (rest > 0) {
            Thread.sleep(rest); // --server-down is how long the old primary stays down: a duration, not a wait for an event
        }
        old.restart(replicaOf(newPort[0]));
        awaitReplicaInSync(promoted, old);
        // the next failover needs the Sentinels to see the old primary up again, as a replica
        await("the Sentinels to see node" + number(old) + " back as a replica", () -> sentinels.stream().allMatch(sentinel ->
                field(RespQuery.send(sentinel.port(), "SENTINEL", "MASTER", MASTER), "num-slaves").equals("1")
                        && replicaUp(sentinel.port(), old.port())));
        record.accept("server-restart node" + number(old) + " as replica");
        record.accept("confirmed failover: node" + number(old) + " exited and its port closed, all 3 Sentinels name node"
                + number(promoted) + " after " + promotedAfter + "ms, node" + number(old) + " replicates it");
    }

    private static List<String> replicaOf(int primaryPort) {
        List<String> args = new ArrayList<>(NO_SYNC_DELAY);
        args.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(primaryPort)));
        return args;
    }

    private int number(CheckServer node) {
        return nodes.indexOf(node) + 1;
    }

    private CheckServer node(int port) {
        return nodes.stream().filter(node -> node.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("the Sentinels name a primary on port " + port + ", which is none of ours"));
    }

    /** @return the primary's port as the first Sentinel that answers names it */
    private int primaryPort() {
        for (CheckServer sentinel : sentinels) {
            int port = masterPort(sentinel);
            if (port > 0) {
                return port;
            }
        }
        throw new IllegalStateException("no Sentinel names a primary for " + MASTER);
    }

    /** @return the highest configuration epoch the Sentinels report for the primary: one more for each failover */
    private long configEpoch() {
        long highest = 0;
        for (CheckServer sentinel : sentinels) {
            String epoch = field(RespQuery.send(sentinel.port(), "SENTINEL", "MASTER", MASTER), "config-epoch");
            if (!epoch.isEmpty()) {
                highest = Math.max(highest, Long.parseLong(epoch));
            }
        }
        return highest;
    }

    /** @return the port of {@code SENTINEL GET-MASTER-ADDR-BY-NAME}, or -1 if the Sentinel does not answer */
    private static int masterPort(CheckServer sentinel) {
        List<String> address = RespQuery.send(sentinel.port(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER);
        return address.size() == 2 ? Integer.parseInt(address.get(1)) : -1;
    }

    /** @return whether the Sentinel lists the replica on that port with no flag but {@code slave}, and the replica says it is one */
    private static boolean replicaUp(int sentinelPort, int replicaPort) {
        List<String> fields = RespQuery.send(sentinelPort, "SENTINEL", "REPLICAS", MASTER);
        java.util.Map<String, String> replica = new java.util.HashMap<>();
        for (int i = 0; i <= fields.size(); i += 2) { // key, value pairs; each replica's begin with "name"
            if (i == fields.size() || fields.get(i).equals("name")) {
                if (replica.getOrDefault("port", "").equals(Integer.toString(replicaPort))) {
                    // not the link status the Sentinel last read: it refreshes a replica's INFO only every 10 s while the primary is up
                    return replica.getOrDefault("flags", "").equals("slave") && replica.getOrDefault("role-reported", "").equals("slave");
                }
                replica.clear();
                if (i == fields.size()) {
                    break;
                }
            }
            replica.put(fields.get(i), fields.get(i + 1));
        }
        return false;
    }

    private void awaitReplicaInSync(CheckServer primary, CheckServer replica) throws InterruptedException {
        await("node" + number(replica) + " to replicate node" + number(primary), () ->
                String.join("", RespQuery.send(primary.port(), "INFO", "replication")).contains("connected_slaves:1")
                        && String.join("", RespQuery.send(replica.port(), "INFO", "replication")).contains("master_link_status:up"));
    }

    private static String field(List<String> flat, String name) {
        int at = flat.indexOf(name);
        return at >= 0 && at + 1 < flat.size() ? flat.get(at + 1) : "";
    }

    private void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WITHIN.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after " + WITHIN.toSeconds() + " s waiting for " + what + "; " + state());
            }
            Thread.sleep(20);
        }
    }

    private static boolean inTilt(CheckServer sentinel) {
        return inTilt(info(sentinel.port()));
    }

    /** @return the Sentinel's {@code INFO sentinel}, empty if it does not answer */
    private static String info(int sentinelPort) {
        return String.join("\n", RespQuery.send(sentinelPort, "INFO", "sentinel"));
    }

    private static boolean inTilt(String info) {
        return info.contains("sentinel_tilt:1");
    }

    /** @return what each Sentinel says, for an error: its TILT flag, the primary it names and its replicas' flags */
    private String state() {
        List<String> said = new ArrayList<>();
        for (int i = 0; i < sentinels.size(); i++) {
            int port = sentinels.get(i).port();
            String info = info(port);
            if (info.isEmpty()) {
                said.add("sentinel" + (i + 1) + " does not answer");
                continue;
            }
            List<String> replicas = RespQuery.send(port, "SENTINEL", "REPLICAS", MASTER);
            List<String> fields = new ArrayList<>();
            for (int at = 0; at + 1 < replicas.size(); at += 2) {
                if (List.of("port", "flags", "role-reported").contains(replicas.get(at))) {
                    fields.add(replicas.get(at) + "=" + replicas.get(at + 1));
                }
            }
            said.add("sentinel" + (i + 1) + (inTilt(info) ? " in TILT mode" : "") + " names primary port "
                    + masterPort(sentinels.get(i)) + ", replicas " + fields);
        }
        return String.join("; ", said);
    }

    @Override
    public void close() {
        sentinels.forEach(CheckServer::close);
        nodes.forEach(CheckServer::close);
    }
}
