package io.cerberus.memcached;

import io.cerberus.spi.support.EngineUri;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parsed {@code memcached://host[:11211][,host2[:port]...][?timeout=2s]}.
 *
 * @param servers the servers, unresolved, in the order given
 * @param timeout the URI's bound of every command, if it sets one (else the connect timeout)
 */
record MemcachedTarget(List<InetSocketAddress> servers, Optional<Duration> timeout) {
    /** Every parameter a memcached URI takes; none carries a secret. */
    static final Set<String> PARAMETERS = Set.of("timeout");

    static final int DEFAULT_PORT = 11211;
    private static final String SHAPE = "memcached://host[:11211][,host2[:port]...][?timeout=2s]";
    /** A host name or IPv4 address, or an IPv6 address in brackets; then the port. */
    private static final Pattern SERVER = Pattern.compile("([A-Za-z0-9.\\-]+|\\[[0-9A-Fa-f:.]+\\]):(\\d{1,5})");

    /**
     * @param uri the engine URI
     * @return the servers and settings it names
     * @throws IllegalArgumentException naming the rule the URI breaks
     */
    static MemcachedTarget parse(String uri) {
        EngineUri parts = EngineUri.parse(uri, "memcached", Set.of("memcached"), PARAMETERS);
        if (parts.user().isPresent() || parts.password().isPresent()) {
            throw new IllegalArgumentException(
                    "a memcached URI takes no user or password: this engine talks to memcached"
                            + " without authentication (keep memcached on a private network); give " + SHAPE + ", was "
                            + parts.shown());
        }
        if (!parts.path().isEmpty()) {
            throw new IllegalArgumentException("a memcached URI has no path: give " + SHAPE + ", was " + parts.shown());
        }
        List<InetSocketAddress> servers = new ArrayList<>();
        for (String server : parts.hostsWithPorts(DEFAULT_PORT)) {
            Matcher matcher = SERVER.matcher(server);
            if (!matcher.matches()) {
                throw new IllegalArgumentException(
                        "bad memcached server '" + server + "' in " + parts.shown() + ": give host or"
                                + " host:port (IPv6 in brackets, [::1]:11211), servers separated by commas: " + SHAPE);
            }
            String host = matcher.group(1);
            InetSocketAddress address = InetSocketAddress.createUnresolved(
                    host.startsWith("[") ? host.substring(1, host.length() - 1) : host,
                    Integer.parseInt(matcher.group(2)));
            if (servers.contains(address)) {
                throw new IllegalArgumentException(
                        "memcached server " + server + " is listed twice in " + parts.shown());
            }
            servers.add(address);
        }
        return new MemcachedTarget(List.copyOf(servers), parts.duration("timeout"));
    }
}
