package io.cerberus.check.fault;

import io.cerberus.servers.FaultProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One check client's engine URI with every server in it reached through a {@link FaultProxy} of
 * its own, so that a {@code partition} can cut that client off from all of them at once:
 * {@code zk://a:1,b:2/x} becomes {@code zk://127.0.0.1:P1,127.0.0.1:P2/x}, and so do
 * {@code redis://}, {@code etcd://}, {@code memcached://} and the {@code jdbc:} URLs of PostgreSQL, MariaDB/MySQL and
 * H2's TCP server.
 * User information, path and query are kept.
 *
 * @param uri the URI the client uses
 * @param proxies one proxy per server, in the URI's order
 */
record ProxiedUri(String uri, List<FaultProxy> proxies) {
    /** The schemes whose URI lists its servers as {@code host[:port]} separated by commas, with each one's default port. */
    private static final Map<String, Integer> DEFAULT_PORTS = Map.of(
            "redis",
            6379,
            "rediss",
            6379,
            "zk",
            2181,
            "etcd",
            2379,
            "jdbc:postgresql",
            5432,
            "jdbc:mariadb",
            3306,
            "jdbc:mysql",
            3306,
            "jdbc:h2:tcp",
            9092,
            "memcached",
            11211);

    /** @return whether {@code engineUri} names servers that {@link #start} can put behind proxies */
    static boolean proxiable(String engineUri) {
        int colon = engineUri.indexOf("://");
        return colon > 0 && DEFAULT_PORTS.containsKey(engineUri.substring(0, colon));
    }

    /**
     * Starts one proxy per server of {@code engineUri}.
     *
     * @throws IllegalArgumentException if the URI is not {@link #proxiable}
     */
    static ProxiedUri start(String engineUri) {
        if (!proxiable(engineUri)) {
            throw new IllegalArgumentException("cannot put the servers of " + engineUri + " behind proxies");
        }
        String scheme = engineUri.substring(0, engineUri.indexOf("://"));
        int hostsStart = scheme.length() + 3;
        int hostsEnd = hostsStart;
        while (hostsEnd < engineUri.length() && "/?#".indexOf(engineUri.charAt(hostsEnd)) < 0) {
            hostsEnd++;
        }
        String authority = engineUri.substring(hostsStart, hostsEnd);
        int at = authority.lastIndexOf('@');
        List<FaultProxy> proxies = new ArrayList<>();
        List<String> proxied = new ArrayList<>();
        try {
            for (String server : authority.substring(at + 1).split(",")) {
                int colon = server.lastIndexOf(':');
                String host = colon < 0 ? server : server.substring(0, colon);
                int port = colon < 0 ? DEFAULT_PORTS.get(scheme) : Integer.parseInt(server.substring(colon + 1));
                FaultProxy proxy = FaultProxy.start(host, port);
                proxies.add(proxy);
                proxied.add("127.0.0.1:" + proxy.port());
            }
        } catch (RuntimeException e) {
            proxies.forEach(FaultProxy::close);
            throw e;
        }
        String uri = engineUri.substring(0, hostsStart)
                + authority.substring(0, at + 1)
                + String.join(",", proxied)
                + engineUri.substring(hostsEnd);
        return new ProxiedUri(uri, List.copyOf(proxies));
    }

    /** @return the URI {@linkplain io.cerberus.spi.support.Redaction#redact redacted}, and the proxies */
    @Override
    public String toString() {
        return "ProxiedUri[uri=" + io.cerberus.spi.support.Redaction.redact(uri) + ", proxies=" + proxies + "]";
    }
}
