package io.cerberus.redis;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redis engine passes the engine conformance suite through a real Sentinel (master, replica, Sentinel). */
class RedisSentinelConformanceTest extends AbstractLockEngineConformanceTest {
    private static RedisSentinelSetup setup;

    @BeforeAll
    static void start() {
        setup = new RedisSentinelSetup();
    }

    @AfterAll
    static void stop() {
        setup.close();
    }

    @Override
    protected String engineUri() {
        return setup.uri();
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redis-sentinel://127.0.0.1:" + FreePorts.next() + "#" + RedisSentinelSetup.MASTER);
    }
}
