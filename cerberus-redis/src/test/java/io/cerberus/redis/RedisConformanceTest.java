package io.cerberus.redis;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redis engine passes the engine conformance suite against a real redis-server. */
class RedisConformanceTest extends AbstractLockEngineConformanceTest {
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

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redis://127.0.0.1:" + FreePorts.next());
    }
}
