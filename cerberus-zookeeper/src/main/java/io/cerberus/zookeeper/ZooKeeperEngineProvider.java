package io.cerberus.zookeeper;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.internal.Checks;
import io.cerberus.internal.Uris;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Opens {@code zk://host1:2181,host2:2181/optional/chroot?sessionTimeout=10s&user=U&password=P}.
 * With a user, every node the engine creates is readable and writable only by that digest user
 * ({@code CREATOR_ALL_ACL}), so applications with their own users cannot read, release or block
 * each other's locks.
 */
public final class ZooKeeperEngineProvider implements EngineProvider {

    @Override
    public Set<String> schemes() {
        return Set.of("zk");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return ZooKeeperEngine.CAPABILITIES;
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        ZooKeeperTarget target = ZooKeeperTarget.parse(context.uri());
        String shown = Uris.redact(context.uri());
        int connectMillis = (int) Math.max(1, context.connectTimeout().toMillis());
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(target.connectString())
                .sessionTimeoutMs((int) target.sessionTimeout().toMillis())
                .connectionTimeoutMs(connectMillis)
                .retryPolicy(new RetryNTimes(1, 50));
        if (target.user() != null) {
            builder.authorization("digest", (target.user() + ":" + target.password()).getBytes(StandardCharsets.UTF_8))
                    .aclProvider(new ACLProvider() {
                        @Override
                        public List<ACL> getDefaultAcl() {
                            return ZooDefs.Ids.CREATOR_ALL_ACL;
                        }

                        @Override
                        public List<ACL> getAclForPath(String path) {
                            return ZooDefs.Ids.CREATOR_ALL_ACL;
                        }
                    });
        }
        CuratorFramework client = builder.build();
        client.start();
        try {
            if (!client.blockUntilConnected(connectMillis, TimeUnit.MILLISECONDS)) {
                throw new EngineUnavailableException("could not connect to zookeeper engine " + shown + " within the connect timeout of "
                        + Checks.format(context.connectTimeout()) + "; check that a quorum of the ensemble runs and the hosts are right", null);
            }
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new EngineUnavailableException("interrupted while connecting to zookeeper engine " + shown, e);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        return new ZooKeeperEngine(shown, target.root(), client, context.lossReporter(), context.connectTimeout());
    }
}
