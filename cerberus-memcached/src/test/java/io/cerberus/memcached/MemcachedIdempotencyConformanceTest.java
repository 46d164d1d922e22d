package io.cerberus.memcached;

import io.cerberus.servers.MemcachedServer;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Idempotency records in memcached (the simple tier's records) pass the store conformance suite against a real memcached. */
class MemcachedIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    private static MemcachedServer server;

    @BeforeAll
    static void startServer() {
        server = MemcachedServer.builder().memoryMb(16).start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        return server.uri();
    }
}
