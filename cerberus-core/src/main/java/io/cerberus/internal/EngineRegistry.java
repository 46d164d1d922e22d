package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.ScrubbedErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** Finds engine providers by URI scheme through {@link ServiceLoader}. */
public final class EngineRegistry {
    private static final Map<String, String> MODULE_OF_SCHEME = Map.of(
            "redis", "cerberus-redis", "rediss", "cerberus-redis", "redis-sentinel", "cerberus-redis",
            "redis-cluster", "cerberus-redis", "rediss-sentinel", "cerberus-redis", "rediss-cluster", "cerberus-redis",
            "redlock", "cerberus-redis",
            "zk", "cerberus-zookeeper", "etcd", "cerberus-etcd", "jdbc", "cerberus-jdbc");

    private static final Map<String, java.util.Set<String>> PLAIN_PARAMETERS = new java.util.concurrent.ConcurrentHashMap<>();
    private static volatile Map<String, EngineProvider> providers;

    private EngineRegistry() {
    }

    static LockEngine open(EngineContext context) {
        String scheme = Checks.uriScheme(context.uri());
        EngineProvider provider = providers().get(scheme);
        if (provider == null) {
            String module = MODULE_OF_SCHEME.get(scheme);
            String hint = module == null ? "" : "; add " + module + " to the class path";
            throw new IllegalArgumentException("no engine serves '" + scheme + ":' URIs" + hint
                    + " (engines found: " + String.join(", ", providers().keySet()) + ")");
        }
        try {
            return provider.open(context);
        } catch (RuntimeException e) {
            throw ScrubbedErrors.scrub(e, context.uri()); // a client library may echo the URI's password
        }
    }

    /** @return what the engine of this URI's scheme declares it can do, before it is opened */
    static java.util.Set<Capability> declaredCapabilities(String uri) {
        EngineProvider provider = providers().get(Checks.uriScheme(uri));
        return provider == null ? java.util.Set.of() : provider.capabilities(Checks.uriScheme(uri));
    }

    /**
     * @param scheme a URI scheme, lower case
     * @return the parameters of that scheme whose values are not secret, lower case; none when no
     *     engine on the class path serves the scheme
     */
    public static java.util.Set<String> plainParameters(String scheme) {
        return PLAIN_PARAMETERS.computeIfAbsent(scheme, s -> {
            EngineProvider provider = providers().get(s);
            return provider == null ? java.util.Set.of() : provider.plainParameters(s).stream()
                    .map(name -> name.toLowerCase(java.util.Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        });
    }

    /**
     * @param scheme a URI scheme, lower case
     * @return whether that scheme's engine shows its URIs' fragment; false when no engine on the
     *     class path serves the scheme
     */
    public static boolean plainFragment(String scheme) {
        EngineProvider provider = providers().get(scheme);
        return provider != null && provider.plainFragment(scheme);
    }

    /** @return the schemes of engines on the class path that have the capability */
    static String schemesWith(Capability capability) {
        List<String> schemes = new ArrayList<>();
        providers().forEach((scheme, provider) -> {
            if (provider.capabilities(scheme).contains(capability)) {
                schemes.add(scheme + ":");
            }
        });
        return schemes.isEmpty() ? "none on the class path" : schemes.stream().collect(Collectors.joining(", "));
    }

    private static Map<String, EngineProvider> providers() {
        Map<String, EngineProvider> found = providers;
        if (found == null) {
            found = new TreeMap<>();
            for (EngineProvider provider : ServiceLoader.load(EngineProvider.class, EngineRegistry.class.getClassLoader())) {
                for (String scheme : new TreeSet<>(provider.schemes())) {
                    found.putIfAbsent(scheme, provider);
                }
            }
            providers = found;
        }
        return found;
    }
}
