package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.EngineUri;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * Serves {@code mem:} and {@code mem:NAME}: locks shared by every client in this JVM that names
 * the same store ({@code mem:} is the default store). The idempotency records of a store are
 * bounded: {@code mem:NAME?maxRecords=100000&maxRecordBytes=64MB} (the defaults; sizes in bytes,
 * or with {@code KB}, {@code MB}, {@code GB}: binary units).
 */
public final class MemoryEngineProvider implements EngineProvider {
    static final Set<Capability> CAPABILITIES =
            EnumSet.of(Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.INSPECT);
    private static final Set<String> PARAMETERS = Set.of("maxRecords", "maxRecordBytes");

    /** For {@link java.util.ServiceLoader}. */
    public MemoryEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("mem");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return CAPABILITIES;
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return PARAMETERS;
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        EngineUri uri = EngineUri.parseOpaque(context.uri(), "mem:", "mem", PARAMETERS);
        Optional<MemoryIdempotencyStore.Limits> limits = uri.parameter("maxRecords")
                        .or(() -> uri.parameter("maxRecordBytes"))
                        .isEmpty()
                ? Optional.empty()
                : Optional.of(new MemoryIdempotencyStore.Limits(
                        uri.number("maxRecords", 1, Long.MAX_VALUE)
                                .orElse(MemoryIdempotencyStore.Limits.DEFAULT.maxRecords()),
                        uri.bytes("maxRecordBytes").orElse(MemoryIdempotencyStore.Limits.DEFAULT.maxBytes())));
        String name = "mem:" + uri.path();
        return new MemoryEngine(name, MemoryStore.named(uri.path()), MemoryIdempotencyStore.named(name, limits));
    }
}
