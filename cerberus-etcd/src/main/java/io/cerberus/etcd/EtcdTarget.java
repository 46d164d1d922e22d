package io.cerberus.etcd;

import io.cerberus.internal.Uris;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What an {@code etcd://} or {@code etcds://} URI asks for:
 * {@code etcd://[user[:password]@]host1:2379[,host2:2379...][/prefix][?ttl=10&ca=/path/ca.pem]}.
 * The scheme {@code etcds} (or {@code tls=true}) speaks TLS to every member.
 *
 * @param endpoints {@code http(s)://host:port} of every member given
 * @param user the etcd user, if any
 * @param password the user's password, if any
 * @param prefix the key prefix under which all lock keys live, without a trailing {@code /}
 * @param ttl the TTL of the client's lease, whole seconds
 * @param tls whether to speak TLS
 * @param trustedCertificates a PEM file of the certificates to trust, if not the JDK's
 */
record EtcdTarget(List<String> endpoints, Optional<String> user, Optional<String> password, String prefix,
        Duration ttl, boolean tls, Optional<Path> trustedCertificates) {

    static final long MAX_TTL_SECONDS = 3600;
    private static final Set<String> PARAMETERS = Set.of("ttl", "tls", "ca");

    /**
     * @param uri the engine URI
     * @return the parsed target
     * @throws IllegalArgumentException naming the rule the URI breaks
     */
    static EtcdTarget parse(String uri) {
        return parse(uri, io.cerberus.CerberusBuilder.DEFAULT_LEASE);
    }

    /**
     * @param uri the engine URI
     * @param defaultLease the client's default lease: the lease TTL when the URI sets none (whole
     *     seconds, rounded up, 1 to 3600), so a silent holder keeps a lock for about one lease
     * @return the parsed target
     * @throws IllegalArgumentException naming the rule the URI breaks
     */
    static EtcdTarget parse(String uri, Duration defaultLease) {
        int schemeEnd = uri.indexOf("://");
        if (schemeEnd < 0) {
            throw new IllegalArgumentException("an etcd URI looks like etcd://host:2379[,host:2379]");
        }
        String scheme = uri.substring(0, schemeEnd).toLowerCase(java.util.Locale.ROOT);
        if (!scheme.equals("etcd") && !scheme.equals("etcds")) {
            throw new IllegalArgumentException("an etcd URI starts with etcd:// or etcds://");
        }
        String rest = uri.substring(schemeEnd + 3);
        Map<String, String> query = query(rest);
        int queryStart = rest.indexOf('?');
        if (queryStart >= 0) {
            rest = rest.substring(0, queryStart);
        }
        String prefix = "cerberus";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            String path = rest.substring(slash + 1).replaceAll("/+$", "");
            if (!path.isEmpty()) {
                prefix = decode(path);
            }
            rest = rest.substring(0, slash);
        }
        Optional<String> user = Optional.empty();
        Optional<String> password = Optional.empty();
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            user = Optional.of(decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                password = Optional.of(decode(userInfo.substring(colon + 1)));
            }
            if (user.get().isEmpty()) {
                throw new IllegalArgumentException("the etcd user in the URI must not be empty");
            }
        }
        boolean tls = scheme.equals("etcds") || (query.containsKey("tls") && Uris.strictBoolean("the etcd URI parameter tls", query.get("tls")));
        List<String> endpoints = new ArrayList<>();
        for (String hostPort : rest.split(",")) {
            endpoints.add((tls ? "https://" : "http://") + hostPort(hostPort));
        }
        Duration ttl = Duration.ofSeconds(ttlSeconds(query.get("ttl"), defaultLease));
        Optional<Path> ca = Optional.ofNullable(query.get("ca")).map(Path::of);
        if (ca.isPresent() && !Files.isReadable(ca.get())) {
            throw new IllegalArgumentException("the etcd trusted certificates file (ca=) must be readable: " + ca.get());
        }
        return new EtcdTarget(List.copyOf(endpoints), user, password, prefix, ttl, tls || ca.isPresent(), ca);
    }

    private static Map<String, String> query(String rest) {
        Map<String, String> query = new LinkedHashMap<>();
        int queryStart = rest.indexOf('?');
        if (queryStart < 0) {
            return query;
        }
        for (String pair : rest.substring(queryStart + 1).split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            if (!PARAMETERS.contains(name)) {
                throw new IllegalArgumentException("unknown etcd URI parameter '" + name + "' (known: ca, tls, ttl)");
            }
            query.put(name, eq < 0 ? "" : decode(pair.substring(eq + 1)));
        }
        return query;
    }

    private static String hostPort(String hostPort) {
        if (hostPort.isBlank()) {
            throw new IllegalArgumentException("an etcd URI names at least one host:port, and no empty one");
        }
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0 || hostPort.endsWith("]")) {
            return hostPort + ":2379";
        }
        try {
            int port = Integer.parseInt(hostPort.substring(colon + 1));
            if (port < 1 || port > 65535) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the port of etcd member '" + hostPort + "' must be a number from 1 to 65535");
        }
        return hostPort;
    }

    private static long ttlSeconds(String value, Duration defaultLease) {
        if (value == null) {
            long seconds = (defaultLease.toMillis() + 999) / 1000;
            return Math.max(1, Math.min(MAX_TTL_SECONDS, seconds));
        }
        try {
            long seconds = Long.parseLong(value);
            if (seconds >= 1 && seconds <= MAX_TTL_SECONDS) {
                return seconds;
            }
        } catch (NumberFormatException e) {
            // falls through to the message below
        }
        throw new IllegalArgumentException("the etcd lease ttl must be whole seconds from 1 to 3600, not '" + value + "'");
    }

    private static String decode(String text) {
        return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
