package io.cerberus.redis;

import io.cerberus.servers.FreePorts;
import io.cerberus.servers.RedisSentinel;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.Optional;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis engine passes the engine conformance suite through real Sentinels (a primary, a replica, three Sentinels). */
class RedisSentinelConformanceTest extends AbstractLockEngineConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisSentinel> SERVERS = ServerExtension.perClass(RedisSentinel::start);

    @Override
    protected String engineUri() {
        return SERVERS.uri();
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redis-sentinel://127.0.0.1:" + FreePorts.next() + "#" + SERVERS.get().masterName());
    }
}
