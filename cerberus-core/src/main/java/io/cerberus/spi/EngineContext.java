package io.cerberus.spi;

import io.cerberus.EngineOptions;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What an engine gets when it is opened.
 *
 * @param uri the engine URI as the user gave it (may contain a password: never log it as is; see
 *     {@link Redaction#redact(String)})
 * @param connectTimeout how long connecting, or any one command, may take before the engine
 *     gives up with {@link io.cerberus.EngineUnavailableException}
 * @param lossReporter where to report holds the engine learns are lost
 * @param options the options the user gave for this engine, at most one of each class
 * @param defaultLease the client's default lease: how long a silent holder keeps a lock, which an
 *     engine whose holds live as long as a session or a lease of the client's own (ZooKeeper's
 *     session timeout, etcd's lease TTL) takes as that timeout when its URI does not set one
 */
public record EngineContext(
        String uri,
        Duration connectTimeout,
        LossReporter lossReporter,
        List<EngineOptions> options,
        Duration defaultLease) {
    /** {@link io.cerberus.CerberusBuilder#DEFAULT_LEASE}, named here so that the SPI does not depend on the builder. */
    private static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    /** Checks for {@code null} and copies the options. */
    public EngineContext {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(lossReporter, "lossReporter");
        Objects.requireNonNull(defaultLease, "defaultLease");
        options = List.copyOf(options);
    }

    /**
     * A context with the default lease of a client built without one.
     *
     * @param uri the engine URI
     * @param connectTimeout the connect and command timeout
     * @param lossReporter where to report lost holds
     * @param options the user's options for the engine
     */
    public EngineContext(String uri, Duration connectTimeout, LossReporter lossReporter, List<EngineOptions> options) {
        this(uri, connectTimeout, lossReporter, options, DEFAULT_LEASE);
    }

    /**
     * A context without options.
     *
     * @param uri the engine URI
     * @param connectTimeout the connect and command timeout
     * @param lossReporter where to report lost holds
     */
    public EngineContext(String uri, Duration connectTimeout, LossReporter lossReporter) {
        this(uri, connectTimeout, lossReporter, List.of());
    }

    /**
     * Returns the option of a class, after checking that every option given is one the engine
     * knows. An engine calls this once per options class it supports, with all of them.
     *
     * @param type the options class wanted
     * @param known every options class the engine accepts
     * @param <T> the options type
     * @return the option of that class, if the user gave one
     * @throws IllegalArgumentException if the user gave an option of a class not in {@code known}
     */
    public <T extends EngineOptions> Optional<T> option(Class<T> type, Set<Class<? extends EngineOptions>> known) {
        for (EngineOptions option : options) {
            if (!known.contains(option.getClass())) {
                String accepted = known.isEmpty()
                        ? "none"
                        : known.stream().map(Class::getSimpleName).sorted().collect(Collectors.joining(", "));
                throw new IllegalArgumentException("the engine of " + Redaction.redact(uri) + " does not take "
                        + option.getClass().getSimpleName() + " (options it takes: " + accepted + ")");
            }
        }
        return options.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    /** @return the context with its URI {@linkplain Redaction#redact redacted} */
    @Override
    public String toString() {
        return "EngineContext[uri=" + Redaction.redact(uri) + ", connectTimeout=" + connectTimeout + ", options="
                + options + ", defaultLease=" + defaultLease + "]";
    }

    /**
     * Checks that no options were given, for engines that take none.
     *
     * @throws IllegalArgumentException if some were
     */
    public void requireNoOptions() {
        option(EngineOptions.class, Set.of());
    }
}
