package io.cerberus.spi.support;

import io.cerberus.spi.EngineProvider;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The engine providers on the class path, by URI scheme, found once through {@link ServiceLoader}
 * (the first provider of a scheme wins). The core opens engines with it and {@link Redaction} asks
 * it which parts of a URI are plain; an engine has no need of it. Thread-safe.
 */
public final class EngineProviders {
    private static final Map<String, Set<String>> PLAIN_PARAMETERS = new ConcurrentHashMap<>();
    private static volatile Map<String, EngineProvider> providers;

    private EngineProviders() {}

    /** @return every scheme served, in order, with its provider; unmodifiable */
    public static Map<String, EngineProvider> byScheme() {
        Map<String, EngineProvider> found = providers;
        if (found == null) {
            Map<String, EngineProvider> loaded = new TreeMap<>();
            for (EngineProvider provider :
                    ServiceLoader.load(EngineProvider.class, EngineProviders.class.getClassLoader())) {
                for (String scheme : new TreeSet<>(provider.schemes())) {
                    loaded.putIfAbsent(scheme, provider);
                }
            }
            found = Collections.unmodifiableMap(loaded);
            providers = found;
        }
        return found;
    }

    /**
     * @param scheme a URI scheme, lower case
     * @return the parameters of that scheme whose values are not secret, lower case; none when no
     *     engine on the class path serves the scheme
     */
    public static Set<String> plainParameters(String scheme) {
        return PLAIN_PARAMETERS.computeIfAbsent(scheme, s -> {
            EngineProvider provider = byScheme().get(s);
            return provider == null
                    ? Set.of()
                    : provider.plainParameters(s).stream()
                            .map(name -> name.toLowerCase(Locale.ROOT))
                            .collect(Collectors.toUnmodifiableSet());
        });
    }

    /**
     * @param scheme a URI scheme, lower case
     * @return whether that scheme's engine shows its URIs' fragment; false when no engine on the
     *     class path serves the scheme
     */
    public static boolean plainFragment(String scheme) {
        EngineProvider provider = byScheme().get(scheme);
        return provider != null && provider.plainFragment(scheme);
    }
}
