package io.cerberus.redis;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.util.Optional;

/** The Redis engine passes the engine conformance suite against a real Redis Cluster (3 masters, 3 replicas). */
class RedisClusterConformanceTest extends AbstractLockEngineConformanceTest {

    @Override
    protected String engineUri() {
        return RedisClusterSetup.shared().uri();
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redis-cluster://127.0.0.1:" + FreePorts.next() + ",127.0.0.1:" + FreePorts.next());
    }
}
