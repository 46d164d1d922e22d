package io.cerberus.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What an engine gets when it is opened.
 *
 * @param uri the engine URI as the user gave it (may contain a password: never log it as is; see
 *     {@link io.cerberus.internal.Uris#redact(String)})
 * @param connectTimeout how long connecting, or any one command, may take before the engine
 *     gives up with {@link io.cerberus.EngineUnavailableException}
 * @param lossReporter where to report holds the engine learns are lost
 */
public record EngineContext(String uri, Duration connectTimeout, LossReporter lossReporter) {
    /** Checks for {@code null}. */
    public EngineContext {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(lossReporter, "lossReporter");
    }
}
