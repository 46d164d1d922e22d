package io.cerberus.zookeeper;

import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.EngineUri;
import java.time.Duration;
import java.util.Set;

/**
 * A parsed {@code zk://host1:2181,host2:2181/optional/chroot?sessionTimeout=10s&user=U&password=P}.
 *
 * @param connectString the hosts, as ZooKeeper takes them
 * @param root the path under which every lock lives (the chroot, default {@code /cerberus})
 * @param sessionTimeout how long the ensemble keeps the session (and its ephemeral holds) of a client it no longer hears
 * @param user digest user, or null
 * @param password digest password, or null
 */
record ZooKeeperTarget(String connectString, String root, Duration sessionTimeout, String user, String password) {
    /** The parameters whose values are not secret. */
    static final Set<String> PLAIN_PARAMETERS = Set.of("sessionTimeout", "user");

    private static final Set<String> PARAMETERS = Set.of("sessionTimeout", "user", "password");

    static final String DEFAULT_ROOT = "/cerberus";
    /** The shortest session timeout the URI may ask for. */
    static final Duration MIN_SESSION_TIMEOUT = Duration.ofMillis(100);

    static ZooKeeperTarget parse(String uri) {
        return parse(uri, io.cerberus.CerberusBuilder.DEFAULT_LEASE);
    }

    /**
     * @param uri the engine URI
     * @param defaultLease the client's default lease: the session timeout when the URI sets none (at
     *     least {@link #MIN_SESSION_TIMEOUT}), so a silent holder keeps a lock for about one lease
     */
    static ZooKeeperTarget parse(String uri, Duration defaultLease) {
        EngineUri parts = EngineUri.parse(uri, "zk", Set.of("zk"), PARAMETERS);
        String shown = parts.shown();
        if (parts.user().isPresent() || parts.password().isPresent()) {
            throw new IllegalArgumentException(
                    "a zk URI gives digest credentials as ?user=U&password=P and has no user-info, was " + shown);
        }
        String root = parts.path().isEmpty() || parts.path().equals("/") ? DEFAULT_ROOT : parts.path();
        if (root.endsWith("/") || root.contains("//")) {
            throw new IllegalArgumentException(
                    "the chroot of " + shown + " must be a path like /apps/locks, without an empty segment");
        }
        Duration session = parts.duration("sessionTimeout")
                .orElse(defaultLease.compareTo(MIN_SESSION_TIMEOUT) < 0 ? MIN_SESSION_TIMEOUT : defaultLease);
        String user = parts.parameter("user").orElse(null);
        String password = parts.parameter("password").orElse(null);
        if ((user == null) != (password == null)) {
            throw new IllegalArgumentException(
                    "give both user and password (digest authentication) in " + shown + ", or neither");
        }
        if (session.compareTo(MIN_SESSION_TIMEOUT) < 0) {
            throw new IllegalArgumentException("sessionTimeout must be at least 100ms in " + shown);
        }
        return new ZooKeeperTarget(String.join(",", parts.hostsWithPorts(2181)), root, session, user, password);
    }

    @Override
    public String toString() {
        return "zk://" + connectString + root + " (session " + Durations.format(sessionTimeout) + ")";
    }
}
