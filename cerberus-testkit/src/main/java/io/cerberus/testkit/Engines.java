package io.cerberus.testkit;

import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.time.Duration;
import java.util.Locale;
import java.util.ServiceLoader;

/** Opens engines directly through the SPI, for tests of the engine contract below the core. */
public final class Engines {
    private Engines() {}

    /**
     * @param uri an engine URI
     * @param timeout the connect timeout
     * @return the open engine (close it)
     */
    public static LockEngine open(String uri, Duration timeout) {
        String scheme = uri.substring(0, uri.indexOf(':')).toLowerCase(Locale.ROOT);
        for (EngineProvider provider : ServiceLoader.load(EngineProvider.class, Engines.class.getClassLoader())) {
            if (provider.schemes().contains(scheme)) {
                return provider.open(new EngineContext(uri, timeout, (token, reason) -> {}));
            }
        }
        throw new IllegalArgumentException("no engine provider for " + scheme + ":");
    }
}
