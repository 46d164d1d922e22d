package io.cerberus.zookeeper;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Holders in separate JVMs on one ZooKeeper server; a killed holder's lock is freed when its session expires. */
class ZooKeeperMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    private static ZooKeeperServer server;

    @BeforeAll
    static void startServer() {
        server = ZooKeeperServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        // no sessionTimeout: the session follows each client's default lease (the children's 800 ms)
        return server.uri() + "/multi";
    }

    @Override
    protected Duration expiryBound() {
        // the child's session (its 800 ms default lease), one tick (200 ms) of the server's expiry, and a second
        return shortLease().plus(TestTimes.millis(1200));
    }

    @Override
    protected boolean pausedHolderKeepsTheLock() {
        return false; // its session expires after the session timeout, and with it the lock
    }
}
