package io.cerberus.redis;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redis engine passes the multi-process conformance suite: killed and paused holders in child JVMs. */
class RedisMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        return server.uri();
    }
}
