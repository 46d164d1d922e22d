package io.cerberus.etcd;

import io.cerberus.testkit.AbstractFailoverAcrossProcessesTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Failover across processes from a real ZooKeeper, killed and restarted with its data, to a real
 * etcd standby. The ZooKeeper session timeout is the workers' default lease (the URI names none);
 * etcd rounds its lease up to whole seconds, and the fail-back's lock-delay follows that lease.
 *
 * <p>The connect timeout is 1 s, not the default 10 s: the ZooKeeper engine withdraws an attempt
 * whose answer was lost on the caller's thread, and against a dead server that waits out the
 * whole timeout (a thread waiting when ZooKeeper died is granted on etcd about 10 s later with the
 * default), where the Redis engine hands the withdrawal to the background. With 1 s the gap stays
 * within the bound; the override goes once the ZooKeeper engine withdraws in the background too.
 */
class ZooKeeperToEtcdFailoverTest extends AbstractFailoverAcrossProcessesTest {
    private StandaloneZooKeeper zookeeper;
    private EtcdServer etcd;

    @BeforeEach
    void startServers() {
        zookeeper = StandaloneZooKeeper.start();
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

    @Override
    protected Duration connectTimeout() {
        return Duration.ofSeconds(1);
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
        return etcd.uri("");
    }
}
