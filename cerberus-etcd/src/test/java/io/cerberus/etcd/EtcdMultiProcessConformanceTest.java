package io.cerberus.etcd;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The etcd engine passes the multi-process conformance suite: a killed or paused child's keys go
 * when its client lease (TTL 2 s here) ends on the server.
 */
class EtcdMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    private static final int TTL_SECONDS = 2;
    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        return server.uri("ttl=" + TTL_SECONDS);
    }

    @Override
    protected Duration expiryBound() {
        // the server ends a lease up to a TTL after the last keep-alive, and checks expiries twice a second
        return Duration.ofSeconds(TTL_SECONDS).plus(TestTimes.millis(2000));
    }
}
