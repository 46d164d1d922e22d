package io.cerberus.testkit;

import io.cerberus.Capability;
import java.util.EnumSet;
import java.util.Set;

/** The {@code mem:} reference engine passes the conformance suite. */
class MemConformanceTest extends AbstractLockEngineConformanceTest {
    @Override
    protected String engineUri() {
        return "mem:conformance";
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.INSPECT);
    }

    @Override
    protected boolean releasesByForce() {
        return true;
    }
}
