package io.cerberus.cli;

import io.cerberus.testkit.TestTimes;

/** A test class that breaks the architecture on purpose: a class of the cerberus command using the testkit. */
public final class ArchitectureOffender {
    private ArchitectureOffender() {
    }

    /** @return something of the forbidden import */
    public static Object offend() {
        return TestTimes.scale();
    }
}
