package io.cerberus.cli;

import io.cerberus.Cerberus;
import io.cerberus.CerberusBuilder;
import io.cerberus.check.console.ConsoleLogging;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The options every command that talks to a lock engine shares: {@code --engine}, {@code --namespace}, {@code --verbose}. */
final class EngineOptions {
    /** The environment variable that names the engine when {@code --engine} is not given. */
    static final String ENGINE_ENV = "CERBERUS_ENGINE";
    /** The engine when neither {@code --engine} nor {@value #ENGINE_ENV} names one. */
    static final String DEFAULT_ENGINE = "file:";

    @Option(
            names = "--engine",
            paramLabel = "URI",
            description =
                    "Lock engine: file:/DIR, file: (= the directory cerberus-$USER in the Java temporary directory, /tmp on Linux), mem: (this process only),"
                            + " or the URI of an engine module on the class path. `inspect` takes it several times (the first is the primary)."
                            + " Default: $" + ENGINE_ENV + " if set, else " + DEFAULT_ENGINE)
    private List<String> engines = new ArrayList<>();

    @Option(
            names = "--namespace",
            paramLabel = "NS",
            defaultValue = CerberusBuilder.DEFAULT_NAMESPACE,
            description = "Namespace (application key) of the lock names. Default: ${DEFAULT-VALUE}")
    private String namespace;

    @Option(names = "--verbose", description = "Show the library's log and stack traces of errors.")
    private void verbose(boolean on) {
        if (on) {
            ConsoleLogging.beVerbose();
        }
    }

    /** @return the engine named by {@code --engine} or {@value #ENGINE_ENV}, if any */
    Optional<String> explicitEngine() {
        if (engines.size() > 1) {
            throw new IllegalArgumentException("this command runs on one engine, but --engine was given "
                    + engines.size() + " times; give it once");
        }
        if (!engines.isEmpty()) {
            return Optional.of(engines.get(0));
        }
        String fromEnv = System.getenv(ENGINE_ENV);
        return fromEnv == null || fromEnv.isBlank() ? Optional.empty() : Optional.of(fromEnv.strip());
    }

    /** @return the engine URI to use */
    String engineUri() {
        return explicitEngine().orElse(DEFAULT_ENGINE);
    }

    String namespace() {
        return namespace;
    }

    /**
     * Connects to the engine.
     *
     * @param uri the engine URI
     * @param lease the default lease of the client's locks
     * @return the client
     * @throws IllegalArgumentException if the URI, the namespace or the lease is bad
     * @throws io.cerberus.EngineUnavailableException if the engine cannot be reached
     */
    Cerberus connect(String uri, Duration lease) {
        return Cerberus.builder()
                .engine(uri)
                .namespace(namespace)
                .defaultLease(lease)
                .build();
    }

    /** @return a client of {@link #engineUri()} with default settings */
    Cerberus connect() {
        return connect(engineUri(), CerberusBuilder.DEFAULT_LEASE);
    }

    /**
     * Connects to every engine given with {@code --engine}, the first as primary, or to the one
     * of {@link #engineUri()} when none was given.
     *
     * @return the client
     * @throws IllegalArgumentException if a URI or the namespace is bad
     * @throws io.cerberus.EngineUnavailableException if an engine cannot be reached
     */
    Cerberus connectAll() {
        if (engines.size() < 2) {
            return connect();
        }
        CerberusBuilder builder = Cerberus.builder().namespace(namespace);
        engines.forEach(builder::engine);
        return builder.build();
    }
}
