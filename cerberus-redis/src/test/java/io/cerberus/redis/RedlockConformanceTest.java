package io.cerberus.redis;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redlock engine passes the engine conformance suite against five real redis-server masters. */
class RedlockConformanceTest extends AbstractLockEngineConformanceTest {
    private static final List<RedisServer> servers = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 5; i++) {
            servers.add(RedisServer.start());
        }
    }

    @AfterAll
    static void stopServers() {
        servers.forEach(RedisServer::close);
        servers.clear();
    }

    static String uri(List<RedisServer> servers) {
        return "redlock://" + servers.stream().map(server -> "127.0.0.1:" + server.port()).collect(Collectors.joining(","));
    }

    @Override
    protected String engineUri() {
        return uri(servers);
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("redlock://127.0.0.1:" + FreePorts.next() + ",127.0.0.1:" + FreePorts.next() + ",127.0.0.1:" + FreePorts.next());
    }
}
