package io.cerberus.zookeeper;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
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
        return server.uri() + "/multi?sessionTimeout=2s";
    }

    @Override
    protected Duration expiryBound() {
        return Duration.ofSeconds(6);
    }

    @Override
    protected boolean pausedHolderKeepsTheLock() {
        return false; // its session expires after the session timeout, and with it the lock
    }
}
