package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Serves {@code mem:} and {@code mem:NAME}: locks shared by every client in this JVM that names
 * the same store ({@code mem:} is the default store). The idempotency records of a store are
 * bounded: {@code mem:NAME?maxRecords=100000&maxRecordBytes=64MB} (the defaults; sizes in bytes,
 * or with {@code KB}, {@code MB}, {@code GB}: binary units).
 */
public final class MemoryEngineProvider implements EngineProvider {
    static final Set<Capability> CAPABILITIES = EnumSet.of(
            Capability.FENCING, Capability.FAIR, Capability.READ_WRITE, Capability.INSPECT);
    private static final Set<String> PARAMETERS = Set.of("maxRecords", "maxRecordBytes");

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
        int query = store.indexOf('?');
        Map<String, String> parameters = query < 0 ? Map.of() : parameters(uri, store.substring(query + 1));
        if (query >= 0) {
            store = store.substring(0, query);
        }
        if (store.contains("/") || store.contains("#")) {
            throw new IllegalArgumentException("mem: URI must be \"mem:\" or \"mem:NAME\" (a store name without '/', '?' or '#'),"
                    + " with parameters after '?', was \"" + uri + "\"");
        }
        Optional<MemoryIdempotencyStore.Limits> limits = parameters.isEmpty() ? Optional.empty()
                : Optional.of(new MemoryIdempotencyStore.Limits(
                        size(uri, "maxRecords", parameters, MemoryIdempotencyStore.Limits.DEFAULT.maxRecords(), false),
                        size(uri, "maxRecordBytes", parameters, MemoryIdempotencyStore.Limits.DEFAULT.maxBytes(), true)));
        String name = "mem:" + store;
        return new MemoryEngine(name, MemoryStore.named(store), MemoryIdempotencyStore.named(name, limits));
    }

    private static Map<String, String> parameters(String uri, String query) {
        Map<String, String> parameters = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = equals < 0 ? pair : pair.substring(0, equals);
            if (!PARAMETERS.contains(name)) {
                throw new IllegalArgumentException("unknown parameter '" + name + "' in mem: URI \"" + uri + "\"; known parameters: "
                        + String.join(", ", new TreeSet<>(PARAMETERS)));
            }
            if (parameters.put(name, equals < 0 ? "" : pair.substring(equals + 1)) != null) {
                throw new IllegalArgumentException("parameter '" + name + "' is given twice in mem: URI \"" + uri + "\"");
            }
        }
        return parameters;
    }

    /** @return the parameter as a positive whole number (with a binary unit where {@code units}), or the default */
    private static long size(String uri, String name, Map<String, String> parameters, long absent, boolean units) {
        String value = parameters.get(name);
        if (value == null) {
            return absent;
        }
        String digits = value.trim().toUpperCase(Locale.ROOT);
        int shift = 0;
        if (units) {
            for (String[] unit : new String[][] {{"KB", "10"}, {"MB", "20"}, {"GB", "30"}, {"B", "0"}}) {
                if (digits.endsWith(unit[0])) {
                    digits = digits.substring(0, digits.length() - unit[0].length()).trim();
                    shift = Integer.parseInt(unit[1]);
                    break;
                }
            }
        }
        try {
            long n = Long.parseLong(digits);
            if (n > 0 && n <= (Long.MAX_VALUE >> shift)) {
                return n << shift;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("parameter " + name + " of mem: URI \"" + uri + "\" must be a positive whole number"
                + (units ? " of bytes, or with KB, MB or GB" : "") + ", was '" + value + "'");
    }
}
