package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.servers.RedisGroup;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redlock engine passes the multi-process conformance suite on three masters: killed and paused holders in child JVMs. */
class RedlockMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisGroup> SERVERS = ServerExtension.perClass(() -> RedisGroup.start(3));

    @Override
    protected String engineUri() {
        return SERVERS.uri();
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(Capability.MULTI_PROCESS, Capability.INSPECT);
    }
}
