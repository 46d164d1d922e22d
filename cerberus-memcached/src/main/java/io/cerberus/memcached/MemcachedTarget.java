package io.cerberus.memcached;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parsed {@code memcached://host[:11211][,host2[:port]...][?timeout=2s]}.
 *
 * @param servers the servers, unresolved, in the order given
 * @param timeout the URI's bound of every command, if it sets one (else the connect timeout)
 */
record MemcachedTarget(List<InetSocketAddress> servers, Optional<Duration> timeout) {
    static final int DEFAULT_PORT = 11211;
    private static final String SCHEME = "memcached://";
    private static final String SHAPE = "memcached://host[:11211][,host2[:port]...][?timeout=2s]";
    /** A host name or IPv4 address, or an IPv6 address in brackets; then an optional port. */
    private static final Pattern SERVER = Pattern.compile("([A-Za-z0-9.\\-]+|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?");
    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m)");

    /**
     * @param uri the engine URI
     * @return the servers and settings it names
     * @throws IllegalArgumentException naming the rule the URI breaks
     */
    static MemcachedTarget parse(String uri) {
        if (!uri.startsWith(SCHEME)) {
            throw new IllegalArgumentException("a memcached URI starts with memcached://, like " + SHAPE);
        }
        String rest = uri.substring(SCHEME.length());
        int q = rest.indexOf('?');
        String hosts = q < 0 ? rest : rest.substring(0, q);
        if (hosts.contains("@")) {
            // not echoed: the part before '@' may be a password
            throw new IllegalArgumentException("a memcached URI takes no user or password: this engine talks to memcached"
                    + " without authentication (keep memcached on a private network); give " + SHAPE);
        }
        if (hosts.contains("/")) {
            throw new IllegalArgumentException("a memcached URI has no path: give " + SHAPE + ", was " + uri);
        }
        List<InetSocketAddress> servers = new ArrayList<>();
        for (String server : hosts.split(",", -1)) {
            InetSocketAddress address = server(server);
            if (servers.contains(address)) {
                throw new IllegalArgumentException("memcached server " + server + " is listed twice in " + uri);
            }
            servers.add(address);
        }
        Optional<Duration> timeout = Optional.empty();
        for (String parameter : q < 0 ? new String[0] : rest.substring(q + 1).split("&", -1)) {
            int eq = parameter.indexOf('=');
            String name = eq < 0 ? parameter : parameter.substring(0, eq);
            if (!name.equals("timeout") || timeout.isPresent()) {
                throw new IllegalArgumentException((name.equals("timeout") ? "parameter 'timeout' given twice" : "unknown parameter '" + name + "'")
                        + " in a memcached URI; it takes timeout only (" + SHAPE + ")");
            }
            timeout = Optional.of(timeout(eq < 0 ? "" : parameter.substring(eq + 1)));
        }
        return new MemcachedTarget(List.copyOf(servers), timeout);
    }

    private static InetSocketAddress server(String server) {
        Matcher matcher = SERVER.matcher(server);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("bad memcached server '" + server + "': give host or host:port (IPv6 in brackets,"
                    + " [::1]:11211), servers separated by commas: " + SHAPE);
        }
        int port = matcher.group(2) == null ? DEFAULT_PORT : Integer.parseInt(matcher.group(2));
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("the port of memcached server '" + server + "' must be 1 to 65535");
        }
        String host = matcher.group(1);
        return InetSocketAddress.createUnresolved(host.startsWith("[") ? host.substring(1, host.length() - 1) : host, port);
    }

    private static Duration timeout(String text) {
        Matcher matcher = DURATION.matcher(text);
        if (!matcher.matches() || Long.parseLong(matcher.group(1)) == 0) {
            throw new IllegalArgumentException("the timeout of a memcached URI must be a positive whole number with ms, s or m"
                    + " (500ms, 2s), was '" + text + "'");
        }
        long amount = Long.parseLong(matcher.group(1));
        return switch (matcher.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            default -> Duration.ofMinutes(amount);
        };
    }
}
