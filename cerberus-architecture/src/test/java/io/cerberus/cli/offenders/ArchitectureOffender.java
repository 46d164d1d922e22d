package io.cerberus.cli.offenders;

import io.cerberus.testkit.TestTimes;

/**
 * A test class that breaks the architecture on purpose: a class of the cerberus command using the
 * testkit, and making and handling a process builder of its own.
 */
public final class ArchitectureOffender {
    private ArchitectureOffender() {}

    /** @return something of the forbidden import */
    public static Object offend() {
        return TestTimes.scale();
    }

    /**
     * @param builder a process builder this class should not handle
     * @return it, set to share this process's streams
     */
    public static ProcessBuilder offendWith(ProcessBuilder builder) {
        return builder.inheritIO();
    }

    /** @return a process builder this class should not make (never started) */
    public static ProcessBuilder offendAgain() {
        return new ProcessBuilder("true");
    }
}
