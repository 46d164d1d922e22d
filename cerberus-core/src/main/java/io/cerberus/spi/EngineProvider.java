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
     * The parameters of a scheme's URIs whose values are never secret: messages, logs, reports and
     * {@code toString} show their values as written, and every other parameter's value (a
     * misspelt name's too) as {@code ****}. Names match whatever their case.
     *
     * @param scheme one of {@link #schemes()}
     * @return those parameter names; none by default, so that every value is hidden
     */
    default Set<String> plainParameters(String scheme) {
        return Set.of();
    }

    /**
     * @param scheme one of {@link #schemes()}
     * @return whether that scheme's URIs end with a {@code #fragment} that is not secret (a
     *     Sentinel master's name), shown as written; false by default, so that a fragment (most
     *     likely the tail of a password cut at an unencoded {@code #}) is hidden
     */
    default boolean plainFragment(String scheme) {
        return false;
    }

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
