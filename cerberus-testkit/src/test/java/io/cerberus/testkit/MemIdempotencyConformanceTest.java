package io.cerberus.testkit;

import java.util.UUID;

/** The mem: idempotency store passes the store conformance suite. */
class MemIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    private final String uri = "mem:idem-" + UUID.randomUUID();

    @Override
    protected String engineUri() {
        return uri;
    }
}
