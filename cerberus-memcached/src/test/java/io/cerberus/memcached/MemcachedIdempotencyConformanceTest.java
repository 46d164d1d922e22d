package io.cerberus.memcached;

import io.cerberus.servers.MemcachedServer;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.ServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Idempotency records in memcached (the simple tier's records) pass the store conformance suite against a real memcached. */
class MemcachedIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    @RegisterExtension
    static final ServerExtension<MemcachedServer> SERVER = ServerExtension.perClass(
            () -> MemcachedServer.builder().memoryMb(16).start());

    @Override
    protected String engineUri() {
        return SERVER.uri();
    }
}
