package io.cerberus.virtualthreads;

import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.MemcachedServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.testkit.ServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One test per server engine (and fair locks on etcd, whose waiters each queue a key there), each
 * handing its engine URI to {@link #contend}: the servers start before a subclass's first test and
 * stop after its last, so every subclass proves the same thing of every engine in its own way.
 */
abstract class EveryServerEngine {
    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> ZOOKEEPER = ServerExtension.perClass(ZooKeeperServer::start);

    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = ServerExtension.perClass(PostgresServer::start);

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = ServerExtension.perClass(MariaDbServer::start);

    @RegisterExtension
    static final ServerExtension<EtcdServer> ETCD = ServerExtension.perClass(EtcdServer::start);

    @RegisterExtension
    static final ServerExtension<MemcachedServer> MEMCACHED = ServerExtension.perClass(MemcachedServer::start);

    /**
     * Runs the subclass's proof against one engine.
     *
     * @param uri the engine URI
     * @param fenced whether the engine's grants carry a fencing token to check
     * @param fair whether to take fair locks instead of plain ones
     */
    abstract void contend(String uri, boolean fenced, boolean fair) throws Exception;

    /** @return the engine of {@code uri} for a test's output line: its scheme, with the database's for JDBC */
    static String engineOf(String uri) {
        int scheme = uri.indexOf(':');
        return uri.startsWith("jdbc:") ? uri.substring(0, uri.indexOf(':', scheme + 1)) : uri.substring(0, scheme);
    }

    @Test
    void redis() throws Exception {
        contend(REDIS.uri(), true, false);
    }

    @Test
    void zooKeeper() throws Exception {
        contend(ZOOKEEPER.uri(), true, false);
    }

    @Test
    void postgresLeaseRows() throws Exception {
        contend(POSTGRES.uri(), true, false);
    }

    @Test
    void mariaDbSessionLocks() throws Exception {
        contend(MARIADB.uri() + "&cerberus.mode=session", false, false);
    }

    @Test
    void etcd() throws Exception {
        contend(ETCD.uri(), true, false);
    }

    /** Fair locks queue every waiter in etcd: what one client sends at once is bounded instead. */
    @Test
    void etcdFairLocks() throws Exception {
        contend(ETCD.uri(), true, true);
    }

    @Test
    void memcached() throws Exception {
        contend(MEMCACHED.uri(), false, false);
    }
}
