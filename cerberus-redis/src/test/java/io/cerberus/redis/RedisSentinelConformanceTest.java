package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.RedisSentinel;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis engine passes the engine conformance suite through real Sentinels (a primary, a replica, three Sentinels). */
class RedisSentinelConformanceTest extends AbstractLockEngineConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisSentinel> SERVERS = ServerExtension.perClass(RedisSentinel::start);

    @Override
    protected Optional<String> semaphoreCasesRunBy() {
        return Optional.of("RedisConformanceTest, the same engine without Sentinel");
    }

    @Override
    protected String engineUri() {
        return SERVERS.uri();
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(
                Capability.FENCING,
                Capability.FAIR,
                Capability.READ_WRITE,
                Capability.MULTI_PROCESS,
                Capability.INSPECT);
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redis-sentinel://127.0.0.1:" + FreePorts.next() + "#"
                + SERVERS.get().masterName());
    }

    @Override
    protected boolean releasesByForce() {
        return true;
    }
}
