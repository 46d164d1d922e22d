package io.cerberus.redis;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redlock engine passes the multi-process conformance suite on three masters: killed and paused holders in child JVMs. */
class RedlockMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    private static final List<RedisServer> servers = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 3; i++) {
            servers.add(RedisServer.start());
        }
    }

    @AfterAll
    static void stopServers() {
        servers.forEach(RedisServer::close);
        servers.clear();
    }

    @Override
    protected String engineUri() {
        return RedlockConformanceTest.uri(servers);
    }
}
