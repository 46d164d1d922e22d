package io.cerberus.shedlock;

import io.cerberus.servers.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's provider suite on a real ZooKeeper server. */
class ZooKeeperShedLockSuiteTest extends ShedLockSuite {
    private static ZooKeeperServer zooKeeper;

    @BeforeAll
    static void startZooKeeper() {
        zooKeeper = ZooKeeperServer.start();
    }

    @AfterAll
    static void stopZooKeeper() {
        zooKeeper.close();
    }

    @Override
    protected String engineUri() {
        return zooKeeper.uri();
    }
}
