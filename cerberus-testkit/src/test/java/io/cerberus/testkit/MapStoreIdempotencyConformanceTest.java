package io.cerberus.testkit;

import java.util.UUID;

/** The idempotency records of the simple tier, on its sample engine ({@link MapStoreEngineProvider}), pass the store conformance suite. */
class MapStoreIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    private final String uri = "kv-map:idem-" + UUID.randomUUID();

    @Override
    protected String engineUri() {
        return uri;
    }
}
