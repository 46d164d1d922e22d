package io.cerberus.zookeeper;

import io.cerberus.internal.Checks;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        String shown = io.cerberus.internal.Uris.redact(uri);
        if (!uri.startsWith("zk://")) {
            throw new IllegalArgumentException("a ZooKeeper URI starts with zk://, was " + shown);
        }
        String rest = uri.substring("zk://".length());
        String query = "";
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        String root = slash < 0 || rest.substring(slash).equals("/") ? DEFAULT_ROOT : rest.substring(slash);
        List<String> checked = new ArrayList<>();
        for (String host : hosts.split(",", -1)) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("empty host in " + shown + ": give zk://host1:2181,host2:2181");
            }
            checked.add(host.contains(":") ? host : host + ":2181");
        }
        if (root.endsWith("/") || root.contains("//")) {
            throw new IllegalArgumentException("the chroot of " + shown + " must be a path like /apps/locks, without an empty segment");
        }
        Map<String, String> parameters = new LinkedHashMap<>();
        if (!query.isEmpty()) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("bad parameter '" + pair + "' in " + shown + "; use name=value");
                }
                parameters.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        Duration session = defaultLease.compareTo(MIN_SESSION_TIMEOUT) < 0 ? MIN_SESSION_TIMEOUT : defaultLease;
        String user = null;
        String password = null;
        for (Map.Entry<String, String> parameter : parameters.entrySet()) {
            switch (parameter.getKey()) {
                case "sessionTimeout" -> session = duration("sessionTimeout", parameter.getValue(), shown);
                case "user" -> user = parameter.getValue();
                case "password" -> password = parameter.getValue();
                default -> throw new IllegalArgumentException("unknown parameter '" + parameter.getKey() + "' in " + shown
                        + "; zk:// takes sessionTimeout, user, password");
            }
        }
        if ((user == null) != (password == null)) {
            throw new IllegalArgumentException("give both user and password (digest authentication) in " + shown + ", or neither");
        }
        if (session.compareTo(MIN_SESSION_TIMEOUT) < 0) {
            throw new IllegalArgumentException("sessionTimeout must be at least 100ms in " + shown);
        }
        return new ZooKeeperTarget(String.join(",", checked), root, session, user, password);
    }

    private static Duration duration(String name, String text, String shown) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,9})(ms|s|m)").matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException(name + " in " + shown + " must be a whole number with ms, s or m, was '" + text + "'");
        }
        long amount = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            default -> Duration.ofMinutes(amount);
        };
    }

    @Override
    public String toString() {
        return "zk://" + connectString + root + " (session " + Checks.format(sessionTimeout) + ")";
    }
}
