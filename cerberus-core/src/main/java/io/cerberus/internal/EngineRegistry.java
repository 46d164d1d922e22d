package io.cerberus.internal;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.EngineProviders;
import io.cerberus.spi.support.ScrubbedErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Opens engines by URI scheme, with the providers {@link EngineProviders} finds. */
public final class EngineRegistry {
    private static final Map<String, String> MODULE_OF_SCHEME = Map.of(
            "redis",
            "cerberus-redis",
            "rediss",
            "cerberus-redis",
            "redis-sentinel",
            "cerberus-redis",
            "redis-cluster",
            "cerberus-redis",
            "rediss-sentinel",
            "cerberus-redis",
            "rediss-cluster",
            "cerberus-redis",
            "redlock",
            "cerberus-redis",
            "zk",
            "cerberus-zookeeper",
            "etcd",
            "cerberus-etcd",
            "jdbc",
            "cerberus-jdbc");

    private EngineRegistry() {}

    static LockEngine open(EngineContext context) {
        String scheme = Checks.uriScheme(context.uri());
        EngineProvider provider = providers().get(scheme);
        if (provider == null) {
            String module = MODULE_OF_SCHEME.get(scheme);
            String hint = module == null ? "" : "; add " + module + " to the class path";
            throw new IllegalArgumentException("no engine serves '" + scheme + ":' URIs" + hint + " (engines found: "
                    + String.join(", ", providers().keySet()) + ")");
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
        return EngineProviders.byScheme();
    }
}
