package io.cerberus.testkit;

/** The {@code mem:} reference engine passes the conformance suite. */
class MemConformanceTest extends AbstractLockEngineConformanceTest {
    @Override
    protected String engineUri() {
        return "mem:conformance";
    }
}
