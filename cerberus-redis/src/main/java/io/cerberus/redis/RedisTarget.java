package io.cerberus.redis;

import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.EngineUri;
import io.cerberus.spi.support.Redaction;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a Redis engine URI (and its {@link RedisOptions}) asks for: the kind of deployment, the
 * Lettuce URIs to connect to, and our own settings.
 *
 * @param kind standalone, Sentinel-managed or Cluster
 * @param uris for standalone and Sentinel one Lettuce URI; for Cluster the seed nodes
 * @param shown the URI with its password hidden
 * @param commandTimeout the URI's {@code timeout}, if it has one
 * @param waitReplicas replicas to wait for after a grant, 0 for none
 * @param waitTimeout how long to wait for them
 * @param acceptEviction whether servers that may evict keys are accepted (with a warning) rather than refused
 */
record RedisTarget(
        Kind kind,
        List<RedisURI> uris,
        String shown,
        Optional<Duration> commandTimeout,
        int waitReplicas,
        Duration waitTimeout,
        boolean acceptEviction) {

    enum Kind {
        STANDALONE,
        SENTINEL,
        CLUSTER
    }

    static final Set<String> SCHEMES =
            Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster");
    private static final Set<String> LETTUCE_PARAMETERS =
            Set.of("timeout", "database", "db", "clientName", "verifyPeer", "sentinelMasterId");
    private static final Set<String> OWN_PARAMETERS = Set.of("waitReplicas", "waitTimeout", "acceptEviction");
    /** Every parameter a Redis URI takes; none carries a secret (the password is the user-info's). */
    static final Set<String> PARAMETERS = union(LETTUCE_PARAMETERS, OWN_PARAMETERS);

    static RedisTarget parse(String uri, RedisOptions options) {
        EngineUri parts = EngineUri.parse(uri, "redis", SCHEMES, PARAMETERS, true);
        String shown = parts.shown();
        String scheme = parts.scheme();
        if (parts.fragment().isPresent() && !scheme.endsWith("-sentinel")) {
            throw new IllegalArgumentException("only a redis-sentinel URI takes a '#' (its master's name), but " + shown
                    + " holds one:" + " a user, password or value holding '#' must be percent-encoded (%23)");
        }
        String lettuceUri = withoutOwnParameters(uri);
        int waitReplicas = parts.number("waitReplicas", 0, 1000).orElse(0L).intValue();
        Duration waitTimeout = parts.duration("waitTimeout").orElse(RedisEngine.DEFAULT_WAIT_TIMEOUT);
        if (options != null && options.waitReplicas() > 0) {
            waitReplicas = options.waitReplicas();
            waitTimeout = options.waitTimeout();
        }
        boolean acceptEviction = RedisOptions.acceptsEviction(
                options, parts.flag("acceptEviction").orElse(false));
        Kind kind = scheme.endsWith("-sentinel")
                ? Kind.SENTINEL
                : scheme.endsWith("-cluster") ? Kind.CLUSTER : Kind.STANDALONE;
        if (kind == Kind.SENTINEL
                && !lettuceUri.contains("#")
                && parts.parameter("sentinelMasterId").isEmpty()) {
            throw new IllegalArgumentException("a redis-sentinel URI names its master after #, e.g."
                    + " redis-sentinel://sentinel1:26379,sentinel2:26379#mymaster, was " + shown);
        }
        List<RedisURI> uris =
                kind == Kind.CLUSTER ? clusterSeeds(lettuceUri, parts) : List.of(lettuce(lettuceUri, shown));
        Optional<Duration> timeout =
                parts.parameter("timeout").isPresent() ? Optional.of(uris.get(0).getTimeout()) : Optional.empty();
        timeout.ifPresent(t -> {
            if (t.isZero() || t.isNegative()) {
                throw new IllegalArgumentException("the timeout of redis URI " + shown + " must be positive");
            }
        });
        if (options != null) {
            for (RedisURI each : uris) {
                apply(options, each);
            }
        }
        return new RedisTarget(kind, List.copyOf(uris), shown, timeout, waitReplicas, waitTimeout, acceptEviction);
    }

    /** @return whether the connections use TLS */
    boolean tls() {
        return uris.get(0).isSsl();
    }

    /** Gives {@code uri} (and its Sentinels) the credentials of {@code options}, if they have any. */
    static void apply(RedisOptions options, RedisURI uri) {
        Optional<char[]> password = options.password();
        Optional<String> user = options.user();
        if (password.isPresent()) {
            // the options replace the URI's credentials, for the data nodes and the Sentinels alike
            // (Sentinels are usually protected like the nodes they watch)
            set(uri, user.orElse(null), password.get());
            for (RedisURI sentinel : uri.getSentinels()) {
                set(sentinel, user.orElse(null), password.get());
            }
        }
    }

    private static void set(RedisURI uri, String user, char[] password) {
        RedisCredentials credentials = RedisCredentials.just(user, password);
        uri.setCredentialsProvider(RedisCredentialsProvider.from(() -> credentials));
    }

    /** @return {@code uri} without the parameters Lettuce does not know (ours) */
    private static String withoutOwnParameters(String uri) {
        int query = uri.indexOf('?');
        if (query < 0) {
            return uri;
        }
        int fragment = uri.indexOf('#', query);
        String parameters = fragment < 0 ? uri.substring(query + 1) : uri.substring(query + 1, fragment);
        List<String> kept = new ArrayList<>();
        for (String parameter : parameters.split("&")) {
            String name = parameter.contains("=") ? parameter.substring(0, parameter.indexOf('=')) : parameter;
            if (!parameter.isEmpty() && !OWN_PARAMETERS.contains(name)) {
                kept.add(parameter);
            }
        }
        return uri.substring(0, query)
                + (kept.isEmpty() ? "" : "?" + String.join("&", kept))
                + (fragment < 0 ? "" : uri.substring(fragment));
    }

    private static RedisURI lettuce(String uri, String shown) {
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "redis URI must look like redis://[user:password@]host[:port][/database][?timeout=10s]"
                            + " (rediss:// for TLS; redis-sentinel://host:port,host:port#master; redis-cluster://host:port,host:port),"
                            + " was " + shown + ": " + Redaction.redact(String.valueOf(e.getMessage())),
                    e);
        }
    }

    /** {@code redis-cluster://[user:password@]h1:p1,h2:p2[?...]}: one Lettuce URI per seed node. */
    private static List<RedisURI> clusterSeeds(String uri, EngineUri parts) {
        String scheme = parts.scheme();
        String shown = parts.shown();
        String base = scheme.startsWith("rediss") ? "rediss://" : "redis://";
        String rest = uri.substring(uri.indexOf("//") + 2);
        int query = rest.indexOf('?');
        String parameters = query < 0 ? "" : rest.substring(query);
        String authority = query < 0 ? rest : rest.substring(0, query);
        if (authority.contains("#")) {
            throw new IllegalArgumentException("a redis-cluster URI has no #fragment, was " + shown);
        }
        int at = authority.lastIndexOf('@');
        String userInfo = at < 0 ? "" : authority.substring(0, at + 1);
        String hosts = authority.substring(at + 1);
        if (hosts.contains("/")) {
            String path = hosts.substring(hosts.indexOf('/') + 1);
            hosts = hosts.substring(0, hosts.indexOf('/'));
            if (!path.isEmpty() && !path.equals("0")) {
                throw new IllegalArgumentException(
                        "Redis Cluster has only database 0, but redis URI " + shown + " asks for " + path);
            }
        }
        if (parts.parameter("database").isPresent() || parts.parameter("db").isPresent()) {
            throw new IllegalArgumentException(
                    "Redis Cluster has only database 0; drop the database parameter of " + shown);
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String host : hosts.split(",")) { // none empty: EngineUri refused that
            seeds.add(lettuce(base + userInfo + host + parameters, shown));
        }
        return seeds;
    }

    @Override
    public String toString() {
        return kind + " " + shown
                + (waitReplicas > 0 ? " (WAIT " + waitReplicas + " within " + Durations.format(waitTimeout) + ")" : "")
                + (acceptEviction ? " (eviction accepted)" : "");
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return java.util.Collections.unmodifiableSet(all);
    }
}
