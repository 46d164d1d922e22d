package io.cerberus.internal.offenders;

import io.cerberus.redis.RedisEngineProvider;
import org.assertj.core.api.Assertions;

/** A test class that breaks the architecture on purpose: a core class using an engine and a third-party library. */
public final class CoreOffender {
    private CoreOffender() {}

    /** @return something of each forbidden import */
    public static Object[] offend() {
        return new Object[] {new RedisEngineProvider(), Assertions.assertThat(1)};
    }
}
