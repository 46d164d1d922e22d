package io.cerberus.testkit;

import io.cerberus.Capability;
import java.util.EnumSet;
import java.util.Set;

/** The sample engine of the simple tier ({@link MapStoreEngineProvider}) passes the conformance suite. */
class MapStoreConformanceTest extends AbstractLockEngineConformanceTest {
    @Override
    protected String engineUri() {
        return "kv-map:conformance";
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(Capability.FENCING);
    }

    @Override
    protected boolean releasesByForce() {
        return true;
    }
}
