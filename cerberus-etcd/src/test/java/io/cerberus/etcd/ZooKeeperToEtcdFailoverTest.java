package io.cerberus.etcd;

import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.testkit.AbstractFailoverAcrossProcessesTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Failover across processes from a real ZooKeeper, killed and restarted with its data, to a real
 * etcd standby. The ZooKeeper session timeout is the workers' default lease (the URI names none);
 * etcd rounds its lease up to whole seconds, and the fail-back's lock-delay follows that lease.
 *
 *
 * <p>The connect timeout (and with it every ZooKeeper request's timeout) is the default 10 s: an
 * attempt waiting on ZooKeeper when it dies is withdrawn in the background, so it goes on at once
 * on etcd; with a withdrawal on the caller's thread the gap after the kill was about 10 s.
 */
class ZooKeeperToEtcdFailoverTest extends AbstractFailoverAcrossProcessesTest {
    private ZooKeeperServer zookeeper;
    private EtcdServer etcd;

    @BeforeEach
    void startServers() {
        zookeeper = ZooKeeperServer.start();
        etcd = EtcdServer.start();
    }

    @AfterEach
    void stopServers() {
        if (zookeeper != null) {
            zookeeper.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    /** A ZooKeeper client tries a restarted server after a pause of up to a second and then needs a new session. */
    @Override
    protected Duration reconnectAllowance() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected String primaryUri() {
        return zookeeper.uri();
    }

    @Override
    protected void killPrimary() {
        zookeeper.kill();
    }

    @Override
    protected void restartPrimary() {
        zookeeper.restart();
    }

    @Override
    protected String standbyUri() {
        return etcd.uri();
    }
}
