package io.cerberus.etcd;

import io.cerberus.spi.support.EngineUri;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
record EtcdTarget(
        List<String> endpoints,
        Optional<String> user,
        Optional<String> password,
        String prefix,
        Duration ttl,
        boolean tls,
        Optional<Path> trustedCertificates) {

    static final long MAX_TTL_SECONDS = 3600;
    /** Every parameter an etcd URI takes; none carries a secret (the password is the user-info's). */
    static final Set<String> PARAMETERS = Set.of("ttl", "tls", "ca");

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
        EngineUri parts = EngineUri.parse(uri, "etcd", Set.of("etcd", "etcds"), PARAMETERS);
        String path = parts.path().replaceAll("/+$", "");
        String prefix = path.length() > 1 ? path.substring(1) : "cerberus";
        if (parts.password().isPresent() && parts.user().isEmpty()) {
            throw new IllegalArgumentException("the etcd user in the URI must not be empty");
        }
        boolean tls = parts.scheme().equals("etcds") || parts.flag("tls").orElse(false);
        List<String> endpoints = new ArrayList<>();
        for (String hostPort : parts.hostsWithPorts(2379)) {
            endpoints.add((tls ? "https://" : "http://") + hostPort);
        }
        // the TTL in whole seconds; by default the client's default lease, rounded up
        long seconds = parts.number("ttl", 1, MAX_TTL_SECONDS)
                .orElse(Math.max(1, Math.min(MAX_TTL_SECONDS, (defaultLease.toMillis() + 999) / 1000)));
        Duration ttl = Duration.ofSeconds(seconds);
        Optional<Path> ca = parts.parameter("ca").map(Path::of);
        if (ca.isPresent() && !Files.isReadable(ca.get())) {
            throw new IllegalArgumentException(
                    "the etcd trusted certificates file (ca=) must be readable: " + ca.get());
        }
        return new EtcdTarget(
                List.copyOf(endpoints), parts.user(), parts.password(), prefix, ttl, tls || ca.isPresent(), ca);
    }

    /** @return the target without its password */
    @Override
    public String toString() {
        return "EtcdTarget[endpoints=" + endpoints + ", user=" + user.orElse("none") + ", password="
                + (password.isPresent() ? "****" : "none")
                + ", prefix=" + prefix + ", ttl=" + ttl + ", tls=" + tls + ", trustedCertificates="
                + trustedCertificates.map(Path::toString).orElse("JDK's")
                + "]";
    }
}
