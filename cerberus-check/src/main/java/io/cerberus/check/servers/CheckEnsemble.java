package io.cerberus.check.servers;

import io.cerberus.check.console.Durations;
import io.cerberus.servers.Ensemble;
import io.cerberus.servers.EtcdCluster;
import io.cerberus.servers.Executables;
import io.cerberus.servers.ZooKeeperEnsemble;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * {@code check --server zk} and {@code check --server etcd}: three servers that elect a leader,
 * started by cerberus-servers with their data and output under the run's directory
 * ({@code zkN/} or {@code etcdN/}, {@code server.out} beside {@code data}), fsynced as in
 * production. A fault kills one member with SIGKILL — the leader ({@code leader-kill}) or the
 * next one in turn ({@code server-kill}) — confirmed (exited, client port refusing), keeps it
 * down for {@code --server-down}, and starts it again on the same ports and data until it serves
 * again as leader or follower, which is its rejoining the group. {@code majority-kill} kills two of
 * the three, the next ones in turn (each confirmed the same way), records whether the one left
 * stopped serving for want of a quorum while they were down, and starts both again until a leader
 * is elected: no lock can be granted meanwhile.
 *
 * <p>ZooKeeper: ticks of 100 ms so that sessions as short as the clients' lease are allowed; the
 * clients' session timeout is the lease, so a holder paused or cut off for longer loses its
 * session and its lock. etcd: its default timings (heartbeat 100 ms, election 1 s); the clients'
 * lease TTL is the lease in whole seconds, at least 2 s, since etcd raises any shorter TTL to 1.5
 * election timeouts.
 */
final class CheckEnsemble implements LockServer {
    private static final Duration START = Duration.ofSeconds(60);

    private final Ensemble<?> servers;
    private final String kind;
    /** What the kind calls one of its servers in the fault log: ZooKeeper's "server", etcd's "member". */
    private final String memberWord;

    private final String uri;
    private int next;

    private CheckEnsemble(Ensemble<?> servers, String kind, String memberWord, String uri) {
        this.servers = servers;
        this.kind = kind;
        this.memberWord = memberWord;
        this.uri = uri;
    }

    /**
     * Starts a ZooKeeper ensemble from this program's own class path (the zookeeper jar the
     * engine's client comes in holds the server too).
     *
     * @param dir the run's directory
     * @param session the clients' session timeout
     * @return the running ensemble
     */
    static CheckEnsemble zooKeeper(Path dir, Duration session) {
        ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.builder()
                .dir(dir)
                .tickTime(Duration.ofMillis(100))
                .sessionTimeouts(Duration.ofMillis(100), Duration.ofSeconds(60))
                .startTimeout(START)
                .start();
        return new CheckEnsemble(
                ensemble,
                "zk",
                "server",
                ensemble.uri() + "/cerberus-check?sessionTimeout=" + session.toMillis() + "ms");
    }

    /**
     * Starts an etcd cluster.
     *
     * @param dir the run's directory
     * @param lease the checker's lease, which the clients' lease TTL follows
     * @return the running cluster
     * @throws IllegalArgumentException if etcd is not installed
     */
    static CheckEnsemble etcd(Path dir, Duration lease) {
        if (Executables.find("etcd").isEmpty()) {
            throw new IllegalArgumentException(
                    "--server etcd needs etcd; install it with: apt-get install etcd-server");
        }
        EtcdCluster cluster = EtcdCluster.builder().dir(dir).startTimeout(START).start();
        long ttl = Math.max(2, (lease.toMillis() + 999) / 1000);
        return new CheckEnsemble(cluster, "etcd", "member", cluster.uri() + "/cerberus-check?ttl=" + ttl);
    }

    @Override
    public String uri() {
        return uri;
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        if (fault.equals("majority-kill")) {
            killMajority(down, record);
            return;
        }
        int index = switch (fault) {
            case "leader-kill" -> servers.awaitLeader(START);
            case "server-kill" -> next++ % servers.size();
            default -> throw new IllegalArgumentException("--server " + kind + " does not take fault " + fault);
        };
        String role = servers.role(index);
        servers.member(index).kill();
        String killed = memberWord + " " + (index + 1) + " (" + (role.isEmpty() ? "not serving" : role) + ")";
        record.accept(fault + " " + killed);
        Thread.sleep(down.toMillis()); // --server-down is how long it stays down: a duration, not a wait for an event
        servers.member(index).restart();
        String restarted = memberWord + " " + (index + 1) + " rejoined as " + servers.role(index) + ", leader "
                + memberWord + " " + (servers.awaitLeader(START) + 1);
        record.accept("server-restart " + restarted);
        record.accept(
                "confirmed " + fault + ": " + killed + " exited of SIGKILL with its port closed, then " + restarted);
    }

    /**
     * Kills a majority, the next members in turn, keeps them down {@code down} while watching the one left, and starts
     * them again until a leader is elected.
     */
    private void killMajority(Duration down, Consumer<String> record) throws InterruptedException {
        List<Integer> killed = new ArrayList<>();
        for (int i = 0; i < servers.majority(); i++) {
            killed.add(next++ % servers.size());
        }
        List<String> roles = killed.stream()
                .map(index -> memberWord + " " + (index + 1) + " (" + role(index) + ")")
                .toList();
        servers.kill(killed);
        long killedAt = System.nanoTime();
        String members = String.join(" and ", roles);
        record.accept("majority-kill " + members);
        // the duration is --server-down; meanwhile the members left are watched: without a quorum they stop serving
        List<Integer> left = IntStream.range(0, servers.size())
                .filter(index -> !killed.contains(index))
                .boxed()
                .toList();
        long end = killedAt + down.toNanos();
        long stoppedAfter = -1;
        while (System.nanoTime() - end < 0) {
            if (stoppedAfter < 0
                    && left.stream().allMatch(index -> servers.role(index).isEmpty())) {
                stoppedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            }
            Thread.sleep(Math.max(1, Math.min(50, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
        }
        String without =
                left.stream().map(index -> memberWord + " " + (index + 1)).collect(Collectors.joining(" and "))
                        + (stoppedAfter < 0
                                ? " still served as "
                                        + left.stream().map(this::role).collect(Collectors.joining(", ")) + " after "
                                        + Durations.format(down) + " without a quorum"
                                : " stopped serving " + stoppedAfter + "ms after the kill (no quorum)");
        record.accept("majority-down " + Durations.format(down) + ": " + without);
        long restarting = System.nanoTime();
        servers.restart(killed);
        int leader = servers.awaitLeader(START);
        String restarted = killed.stream()
                        .map(index -> memberWord + " " + (index + 1) + " rejoined as " + servers.role(index))
                        .collect(Collectors.joining(", "))
                + ", leader " + memberWord + " " + (leader + 1) + ", "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarting) + "ms after the restart";
        record.accept("server-restart " + restarted);
        record.accept("confirmed majority-kill: " + members + " exited of SIGKILL with their ports closed, " + without
                + ", then " + restarted);
    }

    private String role(int index) {
        String role = servers.role(index);
        return role.isEmpty() ? "not serving" : role;
    }

    @Override
    public void close() {
        servers.close();
    }
}
