package io.cerberus.zookeeper;

import io.cerberus.EngineOptions;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * Settings of the {@code zk://} engine that do not fit in its URI: the application's own
 * {@link CuratorFramework}, shared instead of a connection of the engine's own.
 *
 * <pre>{@code
 * Cerberus.builder().engine("zk", "zk://curator/apps/locks", ZooKeeperOptions.client(curator)).build();
 * }</pre>
 *
 * <p>With a client, the URI is {@code zk://curator[/root]}: the hosts, session timeout and
 * credentials are the client's (digest credentials go to its builder's {@code authorization}), so
 * the URI takes neither hosts nor {@code user}/{@code password}. The client must be started. The
 * engine adds a connection-state listener to it and removes it on close; it never closes the
 * client. Holds follow the client's session as usual: SUSPENDED makes them uncertain, LOST loses
 * them — so a client built with a long session timeout keeps locks of a dead process that long.
 */
public final class ZooKeeperOptions implements EngineOptions {
    /** The host part of the URI of an engine on the application's client. */
    public static final String CLIENT_HOST = "curator";

    private final CuratorFramework client;

    private ZooKeeperOptions(CuratorFramework client) {
        this.client = client;
    }

    /**
     * @param client the application's started client
     * @return options that make the engine use it
     */
    public static ZooKeeperOptions client(CuratorFramework client) {
        if (client == null) {
            throw new IllegalArgumentException("the CuratorFramework must not be null");
        }
        return new ZooKeeperOptions(client);
    }

    CuratorFramework client() {
        return client;
    }

    void requireStarted(String shown) {
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalArgumentException("the CuratorFramework given for " + shown + " is " + client.getState()
                    + "; start it before building the client");
        }
    }
}
