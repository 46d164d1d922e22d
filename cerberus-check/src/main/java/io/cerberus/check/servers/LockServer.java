package io.cerberus.check.servers;

import io.cerberus.servers.LoopbackServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A lock server that {@code cerberus check --server KIND} runs itself (one redis-server, Redlock's
 * five, Sentinel's primary, replica and Sentinels, a Redis Cluster, PostgreSQL, MariaDB, H2, a ZooKeeper
 * ensemble, an etcd cluster, memcached), so that it can fault it:
 * start it, give the clients its engine URI, inject a server fault (each step confirmed, not only
 * sent), stop it.
 */
public interface LockServer extends AutoCloseable {

    /** The kinds {@code --server} takes. */
    List<String> KINDS =
            List.of("redis", "redlock", "sentinel", "cluster", "postgres", "mariadb", "h2", "zk", "etcd", "memcached");

    /** The kinds that run redis-servers: each keeps its keys across a restart only with {@code --persistence aof}. */
    List<String> REDIS_KINDS = List.of("redis", "redlock", "sentinel", "cluster");

    /**
     * The kinds with a replica of each primary, which {@code failover} promotes ({@code --wait-replicas} applies); their
     * clients learn where the primaries are from the servers, so no proxy stands between them.
     */
    List<String> REPLICATED_KINDS = List.of("sentinel", "cluster");

    /** The kinds whose clients use the jdbc: engine, in the mode {@code --jdbc-mode} says. */
    List<String> JDBC_KINDS = List.of("postgres", "mariadb", "h2");

    /** The faults ({@code --faults}) that need a server the checker runs. */
    List<String> FAULTS = List.of("server-kill", "leader-kill", "majority-kill", "failover", "failover-unreplicated");

    /**
     * @param kind one of {@link #KINDS}
     * @return the server faults that kind takes
     */
    static List<String> faultsOf(String kind) {
        return switch (kind) {
            case "redis", "postgres", "mariadb", "h2", "memcached" -> List.of("server-kill");
            case "redlock" -> List.of("server-kill", "majority-kill");
            case "sentinel" -> List.of("failover", "failover-unreplicated");
            case "cluster" -> List.of("failover");
            case "zk", "etcd" -> List.of("server-kill", "leader-kill", "majority-kill");
            default -> List.of();
        };
    }

    /**
     * @param kind one of {@link #KINDS}
     * @return the values {@code --persistence} takes with that kind, its default first: Redis's
     *     {@code none} or {@code aof}, H2's {@code delayed} (its write delay) or {@code commit}; none
     *     for the others, which keep their data as their servers do
     */
    static List<String> persistenceOf(String kind) {
        if (REDIS_KINDS.contains(kind)) {
            return List.of("none", "aof");
        }
        return kind.equals("h2") ? List.of("delayed", "commit") : List.of();
    }

    /**
     * Starts the servers of a kind.
     *
     * @param kind one of {@link #KINDS}
     * @param dir the run's directory for the servers' data and output
     * @param persistence one of {@link #persistenceOf} the kind
     * @param jdbcMode {@code lease-row} or {@code session} (postgres, mariadb, h2)
     * @param pgBouncer the pool mode of a PgBouncer in front of postgres ({@code session} or {@code transaction}), or null for none
     * @param lease the clients' lease: ZooKeeper's session timeout and etcd's lease TTL follow it
     * @return the running servers
     * @throws IllegalArgumentException if the server program is not installed
     */
    static LockServer start(
            String kind, Path dir, String persistence, String jdbcMode, String pgBouncer, Duration lease)
            throws IOException, InterruptedException {
        return switch (kind) {
            case "redis", "redlock" -> CheckServers.start(kind, dir, persistence.equals("aof"));
            case "sentinel" -> SentinelServers.start(dir, persistence.equals("aof"));
            case "cluster" -> ClusterServers.start(dir, persistence.equals("aof"));
            case "postgres" -> CheckDatabase.postgres(dir, jdbcMode, pgBouncer);
            case "mariadb" -> CheckDatabase.mariaDb(dir, jdbcMode);
            case "h2" -> CheckDatabase.h2(dir, jdbcMode, persistence.equals("commit"));
            case "zk" -> CheckEnsemble.zooKeeper(dir, lease);
            case "etcd" -> CheckEnsemble.etcd(dir, lease);
            case "memcached" -> CheckMemcached.start(dir);
            default -> throw new IllegalArgumentException("no lock server of kind '" + kind + "'");
        };
    }

    /** @return the scheme of the engine URI a kind's clients get ({@code redis://}, {@code jdbc:}, ...) */
    static String uriScheme(String kind) {
        return switch (kind) {
            case "redis" -> "redis://";
            case "redlock" -> "redlock://";
            case "sentinel" -> "redis-sentinel://";
            case "cluster" -> "redis-cluster://";
            case "postgres" -> "jdbc:postgresql:";
            case "mariadb" -> "jdbc:mariadb:";
            case "h2" -> "jdbc:h2:";
            case "zk" -> "zk://";
            case "etcd" -> "etcd://";
            case "memcached" -> "memcached://";
            default -> throw new IllegalArgumentException("no lock server of kind '" + kind + "'");
        };
    }

    /**
     * @param nodes a deployment's servers, in the order they were created
     * @param node one of them (a restarted server keeps its port)
     * @return its number in the run's logs: 1 for the first
     */
    static int number(List<? extends LoopbackServer> nodes, LoopbackServer node) {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).port() == node.port()) {
                return i + 1;
            }
        }
        throw new IllegalStateException(node + " is none of " + nodes);
    }

    /** @return the engine URI the clients connect to */
    String uri();

    /**
     * @param store a register store {@code cerberus check --register} names: {@code sql} or {@code redis}
     * @return the URI the registers are reached at when this server can keep them (a database for {@code sql}, a
     *     single redis-server for {@code redis}): the server itself, with no proxy or pooler between
     */
    default Optional<String> registerStore(String store) {
        return Optional.empty();
    }

    /**
     * Injects a server fault and waits until it has happened and the server is back.
     *
     * @param fault one of the {@link #faultsOf} its kind
     * @param down how long a killed server stays down
     * @param record receives each step as it is confirmed (logged as a FAULT event of the server)
     */
    void inject(String fault, Duration down, Consumer<String> record) throws IOException, InterruptedException;

    @Override
    void close();
}
