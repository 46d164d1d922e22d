package io.cerberus;

import io.cerberus.internal.CerberusClient;
import io.cerberus.internal.Checks;
import io.cerberus.internal.ClientSettings;
import io.cerberus.internal.EngineSpec;
import io.cerberus.spi.support.Arguments;
import io.cerberus.spi.support.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link Cerberus} client. Every setting has a default; bad values fail in the setter
 * with {@link IllegalArgumentException} naming the rule. Not thread-safe; build once at start-up.
 *
 * <pre>{@code
 * Cerberus cerberus = Cerberus.builder()
 *         .engine("file:/var/lock/myapp")
 *         .namespace("billing")
 *         .defaultLease(Duration.ofSeconds(10))
 *         .build();
 * }</pre>
 */
public final class CerberusBuilder {
    /** Default lease time of locks taken without an explicit lease. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** Default time to wait for an engine to answer a connect or a command. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Default namespace. */
    public static final String DEFAULT_NAMESPACE = "default";

    private final Map<String, EngineSpec> engines = new LinkedHashMap<>();
    private String namespace = DEFAULT_NAMESPACE;
    private Duration defaultLease = DEFAULT_LEASE;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration lockDelay;
    private FailoverPolicy failover;
    private CerberusMetrics metrics;

    CerberusBuilder() {}

    /**
     * Adds an engine, named after its URI scheme (with a number when that name is taken). The
     * first engine added is the primary: new acquisitions go there.
     *
     * @param uri the engine URI
     * @return this builder
     * @throws IllegalArgumentException if the URI is empty or has no scheme
     */
    public CerberusBuilder engine(String uri) {
        return engine(uri, new EngineOptions[0]);
    }

    /**
     * Adds an engine with options, named after its URI scheme (with a number when that name is
     * taken). The first engine added is the primary.
     *
     * @param uri the engine URI
     * @param options settings the engine takes beyond its URI (see {@link EngineOptions})
     * @return this builder
     * @throws IllegalArgumentException if the URI is empty or has no scheme, or an option is null
     */
    public CerberusBuilder engine(String uri, EngineOptions... options) {
        String scheme = Checks.uriScheme(uri);
        String name = scheme;
        for (int i = 2; engines.containsKey(name); i++) {
            name = scheme + i;
        }
        return engine(name, uri, options);
    }

    /**
     * Adds a named engine.
     *
     * @param name the engine name, unique in this client
     * @param uri the engine URI
     * @return this builder
     * @throws IllegalArgumentException if the name is empty or taken, or the URI has no scheme
     */
    public CerberusBuilder engine(String name, String uri) {
        return engine(name, uri, new EngineOptions[0]);
    }

    /**
     * Adds a named engine with options.
     *
     * @param name the engine name, unique in this client
     * @param uri the engine URI
     * @param options settings the engine takes beyond its URI (see {@link EngineOptions})
     * @return this builder
     * @throws IllegalArgumentException if the name is empty or taken, the URI has no scheme, or an
     *     option is null
     */
    public CerberusBuilder engine(String name, String uri, EngineOptions... options) {
        Arguments.name("engine name", name, 64);
        Checks.uriScheme(uri);
        if (engines.containsKey(name)) {
            throw new IllegalArgumentException("engine name '" + name + "' is already used");
        }
        engines.put(name, new EngineSpec(name, uri, options(name, options)));
        return this;
    }

    private static List<EngineOptions> options(String engine, EngineOptions... options) {
        if (options == null) {
            throw new IllegalArgumentException("the options of engine '" + engine + "' must not be null");
        }
        List<EngineOptions> list = new ArrayList<>();
        for (EngineOptions option : options) {
            if (option == null) {
                throw new IllegalArgumentException("an option of engine '" + engine + "' is null");
            }
            for (EngineOptions earlier : list) {
                if (earlier.getClass() == option.getClass()) {
                    throw new IllegalArgumentException("engine '" + engine + "' was given two "
                            + option.getClass().getSimpleName() + "; put every setting into one");
                }
            }
            list.add(option);
        }
        return List.copyOf(list);
    }

    /**
     * Sets the namespace (application key): locks of different namespaces never meet, even with
     * the same name on the same engine. Default {@value #DEFAULT_NAMESPACE}.
     *
     * @param namespace 1 to 128 characters, no control characters
     * @return this builder
     * @throws IllegalArgumentException if the namespace breaks a rule
     */
    public CerberusBuilder namespace(String namespace) {
        this.namespace = Arguments.name("namespace", namespace, 128);
        return this;
    }

    /**
     * Sets the lease time of locks taken without an explicit lease: how long the engine keeps a
     * lock after its holder stops renewing it (crash, pause, partition). Shorter frees the locks
     * of crashed holders sooner; longer tolerates longer pauses. Default 30 s.
     *
     * @param lease at least 100 ms (renewal runs every lease/3)
     * @return this builder
     * @throws IllegalArgumentException if the lease is shorter than 100 ms
     */
    public CerberusBuilder defaultLease(Duration lease) {
        Arguments.notNull("default lease", lease);
        if (lease.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("default lease must be at least 100ms, was " + lease.toMillis() + "ms");
        }
        this.defaultLease = Checks.leaseTime(lease);
        return this;
    }

    /**
     * Sets how long to wait for an engine to connect or to answer one command before failing with
     * {@link EngineUnavailableException}. Default 10 s.
     *
     * @param timeout positive
     * @return this builder
     * @throws IllegalArgumentException if the timeout is not positive
     */
    public CerberusBuilder connectTimeout(Duration timeout) {
        this.connectTimeout = Arguments.positive("connect timeout", timeout);
        return this;
    }

    /**
     * Sets the lock-delay of a switch between engines: for this long after
     * {@link Cerberus#switchEngine()} (or an automatic failover), a new acquisition is also taken
     * on the engine switched away from, when it can be reached, so that holders which have not
     * switched still exclude it. Default: the longest lease this client was granted by the old
     * engine, at least the default lease. Set it to the longest lease any host uses; zero turns
     * the guard off.
     *
     * @param delay zero or positive
     * @return this builder
     * @throws IllegalArgumentException if the delay is null or negative
     */
    public CerberusBuilder lockDelay(Duration delay) {
        Arguments.notNull("lock delay", delay);
        if (delay.isNegative()) {
            throw new IllegalArgumentException("lock delay must be zero or positive, was " + Durations.format(delay));
        }
        this.lockDelay = delay;
        return this;
    }

    /**
     * Turns on automatic failover between the engines (off by default: an unreachable engine
     * then fails acquisitions with {@link EngineUnavailableException}). Needs two engines or more.
     *
     * @param policy when to switch and whether to come back
     * @return this builder
     * @throws IllegalArgumentException if the policy is null
     */
    public CerberusBuilder failover(FailoverPolicy policy) {
        this.failover = Arguments.notNull("failover policy", policy);
        return this;
    }

    /**
     * Sets where the client reports acquisitions, wait and hold times, losses, renewals and
     * switches. Default: the first {@link CerberusMetrics} on the class path (the
     * {@code cerberus-micrometer} module reports to Micrometer), else none.
     *
     * @param metrics the receiver; {@link CerberusMetrics#NONE} for none
     * @return this builder
     * @throws IllegalArgumentException if null
     */
    public CerberusBuilder metrics(CerberusMetrics metrics) {
        this.metrics = Arguments.notNull("metrics", metrics);
        return this;
    }

    /**
     * Connects the engines and returns the client.
     *
     * @return the client
     * @throws IllegalArgumentException if no engine was added, failover was asked with one engine
     *     only, or an engine URI is bad
     * @throws EngineUnavailableException if an engine cannot be reached within the connect timeout
     */
    public Cerberus build() {
        if (engines.isEmpty()) {
            throw new IllegalArgumentException(
                    "at least one engine is needed: call engine(uri), e.g. engine(\"mem:\")");
        }
        if (failover != null && engines.size() < 2) {
            throw new IllegalArgumentException(
                    "failover needs at least two engines, this client has one: add another with engine(uri)");
        }
        return new CerberusClient(
                new ClientSettings(namespace, defaultLease, connectTimeout, lockDelay, failover, metrics),
                List.copyOf(engines.values()));
    }
}
