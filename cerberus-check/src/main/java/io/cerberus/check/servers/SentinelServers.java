package io.cerberus.check.servers;

import io.cerberus.servers.Await;
import io.cerberus.servers.Executables;
import io.cerberus.servers.RedisSentinel;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import io.cerberus.servers.ServerException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code cerberus check --server sentinel}: a {@link RedisSentinel} deployment (a primary, one
 * replica, three Sentinels, quorum 2; a primary is down after 2 s without an answer, failover
 * timeout 2 s) so a failover takes seconds. Its fault, {@code failover}, kills the current primary
 * with SIGKILL, waits until every Sentinel names the replica as primary, and after
 * {@code --server-down} starts the old primary again as a replica of the new one. Redis replicates
 * asynchronously: a grant the killed primary had not yet sent to its replica is not on the
 * promoted one — what the checker then sees is the point of the exercise. On loopback that window
 * is under a millisecond, so {@code failover-unreplicated} opens it on purpose: it cuts the replica
 * off the primary's stream ({@link RedisSentinel#cutReplicasOff()}), waits until the primary has
 * granted the lock (its fencing counter, {@code INCR}ed by every grant, is above the replica's),
 * then kills the primary; once the replica is promoted it confirms that the promoted node's
 * counter is behind the one the primary reached (those grants are lost) and lets replication run
 * again. Without {@code waitReplicas} the next grant repeats a token; with {@code waitReplicas=1}
 * no grant on the cut-off primary is acknowledged, so none reaches a client. A failover first
 * waits until no Sentinel is in TILT mode (see {@link #WITHIN}), and records a failover the
 * Sentinels made on their own since the last one.
 */
final class SentinelServers implements LockServer {
    /**
     * How long a step may take. A Sentinel whose timer ran more than 2 s late (a stalled or overloaded machine) enters
     * TILT mode for 30 s, in which it neither fails over nor clears a replica's down flag; a step is given that long and
     * 30 s more.
     */
    private static final Duration WITHIN = Duration.ofSeconds(60);
    /** How long a cut-off primary may take to grant the lock: the clients ask for it every few ms. */
    private static final Duration GRANT = Duration.ofSeconds(10);
    /** The keys of the Redis engine's token counters (cerberus-redis's {@code LockKeys}): one per namespace. */
    private static final String FENCE_KEYS = "cerberus:{*}:tokens";

    private final RedisSentinel deployment;
    /**
     * The Sentinels' configuration epoch as of the last failover made here (0: none yet). A higher one at the next
     * failover means the Sentinels failed over on their own in between.
     */
    private long expectedEpoch;

    private SentinelServers(RedisSentinel deployment) {
        this.deployment = deployment;
    }

    /**
     * @param dir the run's directory: node N's data and output in {@code nodeN}, Sentinel N's output in {@code sentinelN}
     * @param persistent whether each node keeps an append-only file, fsynced on every write
     * @return the running deployment, ready to fail over
     * @throws IllegalArgumentException if redis-server is not installed
     */
    static SentinelServers start(Path dir, boolean persistent) {
        if (Executables.find("redis-server").isEmpty()) {
            throw new IllegalArgumentException(
                    "--server sentinel needs redis-server; install it with: apt-get install redis-server");
        }
        return new SentinelServers(RedisSentinel.builder()
                .dir(dir)
                .persistence(persistent ? RedisServer.Persistence.AOF_ALWAYS : RedisServer.Persistence.NONE)
                .downAfter(Duration.ofSeconds(2))
                .failoverTimeout(Duration.ofSeconds(2))
                .startTimeout(Duration.ofSeconds(20))
                .awaitTimeout(WITHIN)
                .start());
    }

    @Override
    public String uri() {
        return deployment.uri();
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        // a Sentinel in TILT mode does not fail over, and afterwards it will not promote a replica cut off for that
        // long
        if (deployment.sentinels().stream().anyMatch(SentinelServers::inTilt)) {
            long since = System.nanoTime();
            try {
                Await.until(
                        "the Sentinels to leave TILT mode",
                        WITHIN,
                        () -> deployment.sentinels().stream().noneMatch(SentinelServers::inTilt));
            } catch (ServerException e) {
                throw new ServerException(e.getMessage() + "; " + deployment.state(), e);
            }
            record.accept("tilt-wait: " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since)
                    + "ms until the Sentinels left"
                    + " TILT mode, which a Sentinel enters for 30 s when its timer runs over 2 s late");
        }
        RedisServer old = deployment.primary();
        long epoch = configEpoch();
        if (epoch != expectedEpoch) {
            // a live primary that did not answer the Sentinels in time (a stalled machine) is failed over while it
            // still
            // takes writes from the clients connected to it; what it takes until it is made a replica is lost
            record.accept("unplanned-failover: the Sentinels failed over on their own (configuration epoch "
                    + expectedEpoch + " -> " + epoch + "), node" + number(old) + " is primary");
        }
        boolean unreplicated = fault.equals("failover-unreplicated");
        String lost = "";
        if (unreplicated && cutOffAndAwaitGrant(old, record)) {
            // read last, just before the kill: the replica's counter cannot move while it is cut off, the primary's
            // only grows
            RedisServer replica = replicaOf(old);
            Fences kept = Fences.of(replica);
            Fences granted = Fences.of(old);
            boolean linkDown =
                    RespQuery.text(replica.port(), "INFO", "replication").contains("master_link_status:down");
            if (granted.grantsAhead(kept) > 0 && linkDown) {
                lost = ", node" + number(replica) + " was promoted with fencing counter " + kept + " while node"
                        + number(old) + " had counted " + granted + " when killed: " + granted.grantsAhead(kept)
                        + " grant(s) never replicated";
            } else {
                record.accept("unconfirmed " + fault + ": before the kill node" + number(replica)
                        + " had fencing counter " + kept + " and node" + number(old) + " " + granted
                        + (linkDown ? "" : ", and the replica's link was up again"));
                unreplicated = false;
            }
        } else {
            unreplicated = false;
        }
        record.accept("failover: SIGKILL to the primary, node" + number(old));
        long killed = System.nanoTime();
        old.kill();
        RedisServer promoted = deployment.awaitNewPrimary(old);
        expectedEpoch = configEpoch();
        long promotedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        record.accept("promoted node" + number(promoted) + " after " + promotedAfter + "ms");
        if (fault.equals("failover-unreplicated")) {
            deployment.reconnectReplicas();
        }
        long rest = down.toMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        if (rest > 0) {
            Thread.sleep(
                    rest); // --server-down is how long the old primary stays down: a duration, not a wait for an event
        }
        // in sync with the new primary, and seen up by every Sentinel: the next failover may promote it
        RedisServer back = deployment.restartAsReplica(old);
        record.accept("server-restart node" + number(back) + " as replica");
        if (!fault.equals("failover-unreplicated") || unreplicated) {
            record.accept("confirmed " + fault + ": node" + number(back)
                    + " exited and its port closed, all 3 Sentinels name node" + number(promoted) + " after "
                    + promotedAfter + "ms" + lost + ", node" + number(back) + " replicates it");
        }
    }

    /**
     * Cuts the replica off the primary's stream and waits until the primary grants the lock again.
     *
     * @return whether the primary granted it within {@link #GRANT} (if not, the fault is recorded unconfirmed)
     */
    private boolean cutOffAndAwaitGrant(RedisServer primary, Consumer<String> record) {
        deployment.cutReplicasOff();
        RedisServer replica = replicaOf(primary);
        Fences cut = Fences.of(replica);
        Fences[] granted = {cut};
        try {
            Await.until(
                    "a grant on the primary cut off from its replica",
                    GRANT,
                    () -> (granted[0] = Fences.of(primary)).grantsAhead(cut) > 0);
        } catch (ServerException e) {
            record.accept("unconfirmed failover-unreplicated: node" + number(primary) + " granted nothing in "
                    + GRANT.toSeconds() + "s after its replica was cut off (fencing counter " + cut + ")");
            return false;
        }
        record.accept("replica-cut: node" + number(replica) + " cut off at fencing counter " + cut
                + " (link down, its reconnects"
                + " refused), node" + number(primary) + " counted a grant to " + granted[0]
                + " without it (with waitReplicas the"
                + " grant is given back unacknowledged)");
        return true;
    }

    /** @return the one replica of the deployment's primary */
    private RedisServer replicaOf(RedisServer primary) {
        return deployment.nodes().stream()
                .filter(node -> node.port() != primary.port())
                .findFirst()
                .orElseThrow();
    }

    /**
     * The Redis engine's token counters on one node, by key: each grant {@code INCR}s its namespace's.
     *
     * @param counters the counter of each namespace the node has
     */
    private record Fences(Map<String, Long> counters) {
        static Fences of(RedisServer node) {
            Map<String, Long> counters = new TreeMap<>();
            for (String key : RespQuery.send(node.port(), "KEYS", FENCE_KEYS)) {
                String value = RespQuery.text(node.port(), "GET", key);
                if (value.matches("\\d+")) {
                    counters.put(key, Long.parseLong(value));
                }
            }
            return new Fences(counters);
        }

        /** @return how many grants these counters count that {@code behind}'s do not: a lock it lacks counts one */
        long grantsAhead(Fences behind) {
            return counters.entrySet().stream()
                    .mapToLong(counter -> behind.counters.containsKey(counter.getKey())
                            ? Math.max(0, counter.getValue() - behind.counters.get(counter.getKey()))
                            : 1)
                    .sum();
        }

        @Override
        public String toString() {
            List<Long> values = List.copyOf(counters.values());
            return values.size() == 1 ? values.get(0).toString() : values.toString();
        }
    }

    /** @return the node's number in the logs, 1 for the first one created */
    private int number(RedisServer node) {
        return LockServer.number(deployment.nodes(), node);
    }

    /** @return the highest configuration epoch the Sentinels report for the primary: one more for each failover */
    private long configEpoch() {
        long highest = 0;
        for (RedisServer sentinel : deployment.sentinels()) {
            String epoch = RespQuery.field(
                    RespQuery.send(sentinel.port(), "SENTINEL", "MASTER", deployment.masterName()), "config-epoch");
            if (!epoch.isEmpty()) {
                highest = Math.max(highest, Long.parseLong(epoch));
            }
        }
        return highest;
    }

    private static boolean inTilt(RedisServer sentinel) {
        return RespQuery.text(sentinel.port(), "INFO", "sentinel").contains("sentinel_tilt:1");
    }

    @Override
    public void close() {
        deployment.close();
    }
}
