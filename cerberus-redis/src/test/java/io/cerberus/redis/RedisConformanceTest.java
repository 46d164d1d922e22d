package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis engine passes the engine conformance suite against a real redis-server. */
class RedisConformanceTest extends AbstractLockEngineConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisServer> SERVER = ServerExtension.perClass(RedisServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri();
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
        return Optional.of("redis://127.0.0.1:" + FreePorts.next());
    }

    @Override
    protected boolean releasesByForce() {
        return true;
    }
}
