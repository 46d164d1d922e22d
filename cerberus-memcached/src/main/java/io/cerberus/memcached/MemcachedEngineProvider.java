package io.cerberus.memcached;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.KeyValueEngine;
import java.util.Set;

/**
 * Opens {@code memcached://} engines: a {@link MemcachedStore} made a lock engine by
 * {@link KeyValueEngine}. See {@link MemcachedTarget} for the URI.
 */
public final class MemcachedEngineProvider implements EngineProvider {

    /** Needed by {@link java.util.ServiceLoader}. */
    public MemcachedEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("memcached");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return Set.of(Capability.MULTI_PROCESS);
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return MemcachedTarget.PARAMETERS;
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        MemcachedTarget target = MemcachedTarget.parse(context.uri());
        return new KeyValueEngine(MemcachedStore.open(context.uri(), target, context.connectTimeout()));
    }
}
