package io.cerberus.redis;

import io.cerberus.internal.Checks;
import io.cerberus.internal.Uris;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 */
record RedisTarget(Kind kind, List<RedisURI> uris, String shown, Optional<Duration> commandTimeout, int waitReplicas,
        Duration waitTimeout) {

    enum Kind {
        STANDALONE, SENTINEL, CLUSTER
    }

    static final Set<String> SCHEMES = Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster");
    private static final Set<String> LETTUCE_PARAMETERS = Set.of("timeout", "database", "db", "clientName", "verifyPeer", "sentinelMasterId");
    private static final Set<String> OWN_PARAMETERS = Set.of("waitReplicas", "waitTimeout");
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ns|us|ms|s|m|h)?");

    static RedisTarget parse(String uri, RedisOptions options) {
        String shown = Uris.redact(uri);
        int colon = uri.indexOf(':');
        String scheme = uri.substring(0, Math.max(0, colon)).toLowerCase(Locale.ROOT);
        if (!SCHEMES.contains(scheme) || !uri.startsWith("//", colon + 1)) {
            throw new IllegalArgumentException("redis engine URIs start with one of " + String.join(", ", new TreeSet<>(SCHEMES))
                    + " followed by ://, was " + shown);
        }
        Map<String, String> own = new LinkedHashMap<>();
        String lettuceUri = splitParameters(uri, shown, own);
        int waitReplicas = own.containsKey("waitReplicas") ? count("waitReplicas", own.get("waitReplicas"), shown) : 0;
        Duration waitTimeout = own.containsKey("waitTimeout") ? duration("waitTimeout", own.get("waitTimeout"), shown)
                : RedisEngine.DEFAULT_WAIT_TIMEOUT;
        if (options != null && options.waitReplicas() > 0) {
            waitReplicas = options.waitReplicas();
            waitTimeout = options.waitTimeout();
        }
        Kind kind = scheme.endsWith("-sentinel") ? Kind.SENTINEL : scheme.endsWith("-cluster") ? Kind.CLUSTER : Kind.STANDALONE;
        if (kind == Kind.SENTINEL && !lettuceUri.contains("#") && !hasParameter(lettuceUri, "sentinelMasterId")) {
            throw new IllegalArgumentException("a redis-sentinel URI names its master after #, e.g."
                    + " redis-sentinel://sentinel1:26379,sentinel2:26379#mymaster, was " + shown);
        }
        List<RedisURI> uris = kind == Kind.CLUSTER ? clusterSeeds(lettuceUri, scheme, shown) : List.of(lettuce(lettuceUri, shown));
        Optional<Duration> timeout = hasParameter(uri, "timeout") ? Optional.of(uris.get(0).getTimeout()) : Optional.empty();
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
        return new RedisTarget(kind, List.copyOf(uris), shown, timeout, waitReplicas, waitTimeout);
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

    private static String splitParameters(String uri, String shown, Map<String, String> own) {
        int query = uri.indexOf('?');
        if (query < 0) {
            return uri;
        }
        int fragment = uri.indexOf('#', query);
        String parameters = fragment < 0 ? uri.substring(query + 1) : uri.substring(query + 1, fragment);
        List<String> kept = new ArrayList<>();
        for (String parameter : parameters.split("&")) {
            if (parameter.isEmpty()) {
                continue;
            }
            int equals = parameter.indexOf('=');
            String name = equals < 0 ? parameter : parameter.substring(0, equals);
            if (OWN_PARAMETERS.contains(name)) {
                own.put(name, equals < 0 ? "" : parameter.substring(equals + 1));
            } else if (LETTUCE_PARAMETERS.contains(name)) {
                kept.add(parameter);
            } else {
                Set<String> known = new TreeSet<>(LETTUCE_PARAMETERS);
                known.addAll(OWN_PARAMETERS);
                throw new IllegalArgumentException("unknown parameter '" + name + "' in redis URI " + shown
                        + "; known parameters: " + String.join(", ", known));
            }
        }
        return uri.substring(0, query) + (kept.isEmpty() ? "" : "?" + String.join("&", kept))
                + (fragment < 0 ? "" : uri.substring(fragment));
    }

    private static RedisURI lettuce(String uri, String shown) {
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("redis URI must look like redis://[user:password@]host[:port][/database][?timeout=10s]"
                    + " (rediss:// for TLS; redis-sentinel://host:port,host:port#master; redis-cluster://host:port,host:port),"
                    + " was " + shown + ": " + Uris.redact(String.valueOf(e.getMessage())), e);
        }
    }

    /** {@code redis-cluster://[user:password@]h1:p1,h2:p2[?...]}: one Lettuce URI per seed node. */
    private static List<RedisURI> clusterSeeds(String uri, String scheme, String shown) {
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
                throw new IllegalArgumentException("Redis Cluster has only database 0, but redis URI " + shown + " asks for " + path);
            }
        }
        if (parameters.contains("database=") || parameters.contains("db=")) {
            throw new IllegalArgumentException("Redis Cluster has only database 0; drop the database parameter of " + shown);
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String host : hosts.split(",")) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("redis-cluster URI " + shown + " has an empty host in its list; write"
                        + " redis-cluster://host1:port1,host2:port2");
            }
            seeds.add(lettuce(base + userInfo + host + parameters, shown));
        }
        return seeds;
    }

    private static boolean hasParameter(String uri, String name) {
        int query = uri.indexOf('?');
        if (query < 0) {
            return false;
        }
        for (String parameter : uri.substring(query + 1).split("[&#]")) {
            if (parameter.equals(name) || parameter.startsWith(name + "=")) {
                return true;
            }
        }
        return false;
    }

    private static int count(String name, String value, String shown) {
        try {
            int n = Integer.parseInt(value);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("parameter " + name + " of redis URI " + shown + " must be a whole number, 0 or more, was '"
                + value + "'");
    }

    /** Parses {@code 250ms}, {@code 2s}, {@code 1m}; a bare number is milliseconds. */
    static Duration duration(String name, String value, String shown) {
        Matcher m = DURATION.matcher(value);
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? "ms" : m.group(2);
            Duration d = switch (unit) {
                case "ns" -> Duration.ofNanos(amount);
                case "us" -> Duration.ofNanos(amount * 1000);
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofHours(amount);
            };
            if (!d.isZero()) {
                return d;
            }
        }
        throw new IllegalArgumentException("parameter " + name + " of redis URI " + shown
                + " must be a positive duration such as 250ms, 2s or 1m, was '" + value + "'");
    }

    @Override
    public String toString() {
        return kind + " " + shown + (waitReplicas > 0 ? " (WAIT " + waitReplicas + " within " + Checks.format(waitTimeout) + ")" : "");
    }
}
