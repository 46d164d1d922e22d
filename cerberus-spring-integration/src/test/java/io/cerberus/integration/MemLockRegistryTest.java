package io.cerberus.integration;

/** The registry contract on the {@code mem:} engine (one JVM, the reference engine). */
class MemLockRegistryTest extends AbstractLockRegistryContractTest {
    @Override
    String uri() {
        return "mem:si-contract";
    }
}
