package io.cerberus.redis;

import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.ServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis engine passes the multi-process conformance suite: killed and paused holders in child JVMs. */
class RedisMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisServer> SERVER = ServerExtension.perClass(RedisServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri();
    }
}
