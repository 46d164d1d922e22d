package io.cerberus.spi;

import io.cerberus.Capability;
import java.util.Set;

/**
 * Opens engines for the URI schemes it serves. Found through {@link java.util.ServiceLoader};
 * needs a public no-argument constructor.
 */
public interface EngineProvider {

    /** @return the URI schemes served, lower case: {@code file}, {@code redis}, ... */
    Set<String> schemes();

    /**
     * @param scheme one of {@link #schemes()}
     * @return what engines of that scheme can do, for error messages that name the engines that
     *     have a missing capability
     */
    Set<Capability> capabilities(String scheme);

    /**
     * Opens an engine and checks that it can be reached.
     *
     * @param context the URI and settings
     * @return the open engine
     * @throws IllegalArgumentException if the URI is malformed, naming the rule
     * @throws io.cerberus.EngineUnavailableException if the engine cannot be reached within the
     *     connect timeout
     */
    LockEngine open(EngineContext context);
}
