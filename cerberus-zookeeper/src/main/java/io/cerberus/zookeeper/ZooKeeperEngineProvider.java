package io.cerberus.zookeeper;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.Redaction;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * Opens {@code zk://host1:2181,host2:2181/optional/chroot?sessionTimeout=10s&user=U&password=P}.
 * With a user, every namespace node the engine creates, and everything in it, is readable and
 * writable only by that digest user, so applications with their own users
 * (and namespaces) cannot read, release or block each other's locks; the root above the namespaces
 * stays open for reading and creating, and no one may delete in it. A root whose ACL lets another
 * identity delete in it is refused at open ({@link io.cerberus.UnsafeEngineException}).
 */
public final class ZooKeeperEngineProvider implements EngineProvider {
    private static final System.Logger LOG = System.getLogger(ZooKeeperEngineProvider.class.getName());

    static boolean isRootOrAbove(String path, String root) {
        return root.equals(path) || root.startsWith(path.endsWith("/") ? path : path + "/");
    }

    @Override
    public Set<String> schemes() {
        return Set.of("zk");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return ZooKeeperEngine.CAPABILITIES;
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return ZooKeeperTarget.PLAIN_PARAMETERS;
    }

    @Override
    public LockEngine open(EngineContext context) {
        ZooKeeperOptions options = context.option(ZooKeeperOptions.class, Set.of(ZooKeeperOptions.class))
                .orElse(null);
        ZooKeeperTarget target = ZooKeeperTarget.parse(context.uri(), context.defaultLease());
        String shown = Redaction.redact(context.uri());
        int connectMillis = (int) Math.max(1, context.connectTimeout().toMillis());
        if (options != null) {
            return onClientOf(options, target, shown, context, connectMillis);
        }
        if (target.connectString().equals(ZooKeeperOptions.CLIENT_HOST + ":2181")) {
            throw new IllegalArgumentException(shown + " stands for the application's CuratorFramework: pass it with"
                    + " ZooKeeperOptions.client(curator)");
        }
        // ZooKeeper itself ends a synchronous request left unanswered for the connect timeout (and
        // drops the connection): so the engine may wait for its hot requests on the caller's thread
        ZKClientConfig zooKeeperConfig = new ZKClientConfig();
        zooKeeperConfig.setProperty(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, Integer.toString(connectMillis));
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(target.connectString())
                .sessionTimeoutMs((int) target.sessionTimeout().toMillis())
                .connectionTimeoutMs(connectMillis)
                .zkClientConfig(zooKeeperConfig)
                .retryPolicy(new RetryNTimes(1, 50));
        List<ACL> ownAcl = null;
        if (target.user() != null) {
            Id owner;
            try {
                owner = new Id(
                        "digest", DigestAuthenticationProvider.generateDigest(target.user() + ":" + target.password()));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException("this JVM has no SHA-1 for ZooKeeper digest authentication", e);
            }
            // (lists that allow contains(null): ZooKeeper checks its ACL lists for null entries)
            List<ACL> ownerOnly = java.util.Arrays.asList(new ACL(ZooDefs.Perms.ALL, owner));
            ownAcl = ownerOnly;
            // no one keeps the right to delete a namespace of the root or to change its ACL, not even its
            // creator: another application sharing it could otherwise take its namespaces over
            List<ACL> sharedParent = java.util.Arrays.asList(
                    new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
            builder.authorization("digest", (target.user() + ":" + target.password()).getBytes(StandardCharsets.UTF_8))
                    .aclProvider(new ACLProvider() {
                        @Override
                        public List<ACL> getDefaultAcl() {
                            return ownerOnly;
                        }

                        @Override
                        public List<ACL> getAclForPath(String path) {
                            // the root (and the parents above it) is shared by every application: anyone may
                            // read it and create a namespace in it, no one delete one; a namespace and everything
                            // in it belong to the user that created it
                            return isRootOrAbove(path, target.root()) ? sharedParent : ownerOnly;
                        }
                    });
        }
        CuratorFramework client = builder.build();
        client.start();
        try {
            if (!client.blockUntilConnected(connectMillis, TimeUnit.MILLISECONDS)) {
                throw new EngineUnavailableException(
                        "could not connect to zookeeper engine " + shown + " within the connect timeout of "
                                + Durations.format(context.connectTimeout())
                                + "; check that a quorum of the ensemble runs and the hosts are right",
                        null);
            }
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new EngineUnavailableException("interrupted while connecting to zookeeper engine " + shown, e);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        warnIfSessionLonger(client, target.sessionTimeout(), shown);
        ZooKeeperEngine engine = new ZooKeeperEngine(
                shown, target.root(), client, true, context.lossReporter(), context.connectTimeout(), ownAcl);
        try {
            engine.checkRoot();
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
        return engine;
    }

    /**
     * The ensemble bounds session timeouts ({@code minSessionTimeout}, by default 2 × tickTime;
     * {@code maxSessionTimeout}, 20 × tickTime): a longer session than asked means a holder that
     * stops answering keeps its locks that much longer, which the user must be told.
     */
    private static void warnIfSessionLonger(CuratorFramework client, Duration asked, String shown) {
        int granted = ZooKeeperEngine.grantedSessionMillis(client);
        Duration session = Duration.ofMillis(granted);
        if (session.compareTo(asked) > 0) {
            LOG.log(
                    Level.WARNING,
                    "zookeeper engine " + shown + ": the ensemble granted a session timeout of "
                            + Durations.format(session)
                            + " where " + Durations.format(asked)
                            + " was asked (it raises shorter ones to its minSessionTimeout, by default"
                            + " 2 x tickTime): a client that stops answering keeps its locks for up to "
                            + Durations.format(session));
        }
    }

    private static LockEngine onClientOf(
            ZooKeeperOptions options, ZooKeeperTarget target, String shown, EngineContext context, int connectMillis) {
        if (!target.connectString().equals(ZooKeeperOptions.CLIENT_HOST + ":2181")) {
            throw new IllegalArgumentException("an engine on the application's CuratorFramework takes the URI zk://"
                    + ZooKeeperOptions.CLIENT_HOST + "[/root]: its hosts are the client's; was " + shown);
        }
        if (target.user() != null) {
            throw new IllegalArgumentException(
                    "an engine on the application's CuratorFramework uses the client's credentials;"
                            + " give them to its builder (authorization, aclProvider), not in " + shown);
        }
        options.requireStarted(shown);
        CuratorFramework client = options.client();
        try {
            if (!client.blockUntilConnected(connectMillis, TimeUnit.MILLISECONDS)) {
                throw new EngineUnavailableException(
                        "the CuratorFramework given for " + shown + " did not connect within the connect timeout of "
                                + Durations.format(context.connectTimeout())
                                + "; check that a quorum of its ensemble runs",
                        null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EngineUnavailableException("interrupted while waiting for the CuratorFramework of " + shown, e);
        }
        return new ZooKeeperEngine(
                shown, target.root(), client, false, context.lossReporter(), context.connectTimeout(), null);
    }
}
