package io.cerberus.etcd;

import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The etcd idempotency store passes the store conformance suite against a real etcd. */
class EtcdIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
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
}
