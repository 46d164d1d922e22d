package io.cerberus.redis;

import io.cerberus.servers.FreePorts;
import io.cerberus.servers.RedisGroup;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.Optional;
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
    protected Optional<String> unreachableUri() {
        return Optional.of("redlock://127.0.0.1:" + FreePorts.next() + ",127.0.0.1:" + FreePorts.next() + ",127.0.0.1:" + FreePorts.next());
    }
}
