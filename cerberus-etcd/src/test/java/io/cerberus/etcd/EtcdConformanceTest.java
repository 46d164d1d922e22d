package io.cerberus.etcd;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The etcd engine passes the engine conformance suite against a real etcd. */
class EtcdConformanceTest extends AbstractLockEngineConformanceTest {
    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        return server.uri("ttl=2");
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("etcd://127.0.0.1:" + FreePorts.next());
    }
}
