package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.util.EnumSet;
import java.util.Set;

/**
 * Serves {@code mem:} and {@code mem:NAME}: locks shared by every client in this JVM that names
 * the same store ({@code mem:} is the default store).
 */
public final class MemoryEngineProvider implements EngineProvider {
    static final Set<Capability> CAPABILITIES = EnumSet.of(
            Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.INSPECT);

    /** For {@link java.util.ServiceLoader}. */
    public MemoryEngineProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("mem");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return CAPABILITIES;
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        String uri = context.uri();
        String store = uri.substring(uri.indexOf(':') + 1);
        if (store.startsWith("//")) {
            store = store.substring(2);
        }
        if (store.contains("?") || store.contains("/")) {
            throw new IllegalArgumentException("mem: URI must be \"mem:\" or \"mem:NAME\" (a store name without '/' or '?'), was \"" + uri + "\"");
        }
        return new MemoryEngine("mem:" + store, MemoryStore.named(store));
    }
}
