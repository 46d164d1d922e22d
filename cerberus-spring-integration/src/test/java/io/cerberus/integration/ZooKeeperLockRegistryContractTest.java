package io.cerberus.integration;

import io.cerberus.servers.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The registry contract on a real ZooKeeper, the store {@code ZookeeperLockRegistry} users run. */
class ZooKeeperLockRegistryContractTest extends AbstractLockRegistryContractTest {
    private static ZooKeeperServer zooKeeper;

    @BeforeAll
    static void startZooKeeper() {
        zooKeeper = ZooKeeperServer.start();
    }

    @AfterAll
    static void stopZooKeeper() {
        if (zooKeeper != null) {
            zooKeeper.close();
        }
    }

    @Override
    String uri() {
        return zooKeeper.uri();
    }
}
