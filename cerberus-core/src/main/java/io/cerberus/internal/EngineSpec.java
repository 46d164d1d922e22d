package io.cerberus.internal;

import io.cerberus.EngineOptions;
import io.cerberus.spi.support.Redaction;
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

    /** @return the spec with its URI {@linkplain Redaction#redact redacted} */
    @Override
    public String toString() {
        return "EngineSpec[name=" + name + ", uri=" + Redaction.redact(uri) + ", options=" + options + "]";
    }
}
