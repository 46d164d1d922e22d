package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.RedisGroup;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redlock engine passes the engine conformance suite against five real redis-server masters. */
class RedlockConformanceTest extends AbstractLockEngineConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisGroup> SERVERS = ServerExtension.perClass(() -> RedisGroup.start(5));

    @Override
    protected String engineUri() {
        return SERVERS.uri();
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(Capability.MULTI_PROCESS, Capability.INSPECT);
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redlock://127.0.0.1:" + FreePorts.next() + ",127.0.0.1:" + FreePorts.next() + ",127.0.0.1:"
                + FreePorts.next());
    }

    @Override
    protected boolean simultaneousTriesMayAllLose() {
        return true;
    }
}
