package io.cerberus.zookeeper;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Holders in separate JVMs on one ZooKeeper server; a killed or paused holder's lock is freed when its session expires. */
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
    protected Duration serverRounding() {
        return Duration.ofMillis(200); // the test server's tickTime: sessions are expired on tick boundaries
    }
}
