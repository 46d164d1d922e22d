package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis engine passes the multi-process conformance suite: killed and paused holders in child JVMs. */
class RedisMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
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
}
