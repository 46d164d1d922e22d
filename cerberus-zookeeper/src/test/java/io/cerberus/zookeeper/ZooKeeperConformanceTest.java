package io.cerberus.zookeeper;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The ZooKeeper engine passes the engine conformance suite against a real ZooKeeper server. */
class ZooKeeperConformanceTest extends AbstractLockEngineConformanceTest {
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
        return server.uri() + "/conformance?sessionTimeout=2s";
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("zk://127.0.0.1:" + FreePorts.next());
    }

    @Override
    protected Duration expiryBound() {
        return Duration.ofSeconds(6);
    }
}
