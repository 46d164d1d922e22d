package io.cerberus.internal;

import io.cerberus.EngineOptions;
import java.util.List;

/**
 * One engine a client is built with.
 *
 * @param name its name in the client
 * @param uri its URI
 * @param options its options, at most one of each class
 */
public record EngineSpec(String name, String uri, List<EngineOptions> options) {
    /** Copies the options. */
    public EngineSpec {
        options = List.copyOf(options);
    }
}
