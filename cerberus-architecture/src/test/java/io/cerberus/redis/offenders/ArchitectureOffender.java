package io.cerberus.redis.offenders;

import io.cerberus.internal.Checks;
import io.cerberus.jdbc.JdbcEngineProvider;

/** A test class that breaks the architecture on purpose: an engine class using the core's internals and another engine. */
public final class ArchitectureOffender {
    private ArchitectureOffender() {}

    /** @return something of each forbidden import */
    public static Object[] offend() {
        return new Object[] {Checks.lockName("x"), new JdbcEngineProvider()};
    }
}
