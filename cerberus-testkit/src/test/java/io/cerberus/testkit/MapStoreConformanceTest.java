package io.cerberus.testkit;

/** The sample engine of the simple tier ({@link MapStoreEngineProvider}) passes the conformance suite. */
class MapStoreConformanceTest extends AbstractLockEngineConformanceTest {
    @Override
    protected String engineUri() {
        return "kv-map:conformance";
    }
}
