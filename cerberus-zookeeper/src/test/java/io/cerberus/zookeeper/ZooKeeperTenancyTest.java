package io.cerberus.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Applications with their own digest users sharing one ensemble: the root no one else may delete
 * in, and a namespace node taken over while the client was away, on a real server whose super
 * user plays the administrator (or the intruder) who may delete anything.
 */
class ZooKeeperTenancyTest {
    private static final String SUPER = "super:admin-secret";

    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> SERVER = ServerExtension.perClass(() -> ZooKeeperServer.builder()
            .jvmOptions(
                    "-Xmx128m",
                    "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1",
                    "-Dzookeeper.DigestAuthenticationProvider.superDigest=" + digest(SUPER))
            .start());

    private static String digest(String userAndPassword) {
        try {
            return DigestAuthenticationProvider.generateDigest(userAndPassword);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return a started Curator client on the server, with a digest {@code user:password}, or none when null */
    private static CuratorFramework zooKeeper(String userAndPassword) throws InterruptedException {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(SERVER.get().connectString())
                .retryPolicy(new RetryNTimes(3, 100));
        if (userAndPassword != null) {
            builder.authorization("digest", userAndPassword.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = builder.build();
        client.start();
        assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        return client;
    }

    private static Cerberus app(String root, String credentials, String namespace) {
        return Cerberus.builder()
                .engine(SERVER.uri() + root + "?sessionTimeout=30s" + credentials)
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Test
    void aRootOthersMayDeleteInIsRefusedWithCredentialsAndUsedWithout() throws Exception {
        String openToAll = "/open-" + UUID.randomUUID();
        String anotherUsers = "/app-b-owns-" + UUID.randomUUID();
        try (CuratorFramework anyone = zooKeeper(null);
                CuratorFramework appB = zooKeeper("app-b:secret-b")) {
            anyone.create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(openToAll);
            Id b = new Id("digest", digest("app-b:secret-b"));
            appB.create()
                    .withACL(List.of(
                            new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE),
                            new ACL(ZooDefs.Perms.ALL, b)))
                    .forPath(anotherUsers);
        }
        assertThatThrownBy(() -> app(openToAll, "&user=app-a&password=secret-a", "billing"))
                .as("world:anyone may delete")
                .isInstanceOf(UnsafeEngineException.class)
                .hasMessageContaining(openToAll)
                .hasMessageContaining("world")
                .hasMessageContaining("setAcl " + openToAll + " world:anyone:rc")
                .hasMessageNotContaining("secret-a");
        assertThatThrownBy(() -> app(anotherUsers, "&user=app-a&password=secret-a", "billing"))
                .as("app-b may delete")
                .isInstanceOf(UnsafeEngineException.class)
                .hasMessageContaining(anotherUsers)
                .hasMessageContaining("digest");
        try (Cerberus owner = app(anotherUsers, "&user=app-b&password=secret-b", "shipping");
                Cerberus single = app(openToAll, "", "billing")) {
            assertThat(owner.lock("order:1").tryLock())
                    .as("the root's own user")
                    .isTrue();
            owner.lock("order:1").unlock();
            assertThat(single.lock("order:1").tryLock())
                    .as("without credentials nothing is isolated, nothing checked")
                    .isTrue();
            single.lock("order:1").unlock();
        }
    }

    @Test
    void aRootTheEngineMakesLetsEveryAppCreateItsNamespaceAndNoneDeleteAnothers() throws Exception {
        String root = "/shared-" + UUID.randomUUID();
        try (Cerberus appA = app(root, "&user=app-a&password=secret-a", "billing");
                Cerberus appB = app(root, "&user=app-b&password=secret-b", "shipping");
                CuratorFramework asB = zooKeeper("app-b:secret-b")) {
            DistributedLock lock = appA.lock("order:1");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            assertThat(appB.lock("order:1").tryLock())
                    .as("B's namespace in the same root")
                    .isTrue();
            appB.lock("order:1").unlock();
            assertThat(asB.getACL().forPath(root))
                    .as("anyone reads and creates, no one deletes or administers")
                    .containsExactly(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
            assertThatThrownBy(
                            () -> asB.delete().deletingChildrenIfNeeded().forPath(LockPaths.namespace(root, "billing")))
                    .as("B deleting A's namespace node")
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThat(appA.checkEngine(appA.engines().get(0))).isEmpty();
        }
    }

    @Test
    void aNamespaceNodeReplacedWhileTheConnectionWasDownIsRefusedAfterTheReconnection() throws Exception {
        String root = "/squatted-" + UUID.randomUUID();
        String namespacePath = LockPaths.namespace(root, "billing");
        try (Cerberus appA = app(root, "&user=app-a&password=secret-a", "billing");
                CuratorFramework administrator = zooKeeper(SUPER);
                CuratorFramework mallory = zooKeeper("mallory:m")) {
            DistributedLock lock = appA.lock("order:1");
            assertThat(lock.tryLock()).as("A's namespace, checked and used").isTrue();
            lock.unlock();

            administrator.delete().deletingChildrenIfNeeded().forPath(namespacePath);
            mallory.create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(namespacePath);
            SERVER.get().restart(); // drops A's connection; its session outlives the restart
            String engine = appA.engines().get(0);
            Poll.until("A reconnected", TestTimes.millis(30_000), () -> {
                try {
                    appA.checkEngine(engine);
                    return true;
                } catch (EngineUnavailableException e) {
                    return false;
                }
            });

            assertThatThrownBy(lock::tryLock)
                    .as("a lock under a node mallory controls")
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(namespacePath)
                    .hasMessageContaining("not this application's own")
                    .hasMessageContaining("world");
            assertThat(mallory.getChildren().forPath(namespacePath))
                    .as("nothing of A's under mallory's node")
                    .isEmpty();

            administrator.delete().forPath(namespacePath);
            assertThat(lock.tryLock())
                    .as("the administrator deleted it: A makes it its own again")
                    .isTrue();
            lock.unlock();
            assertThat(administrator.getACL().forPath(namespacePath))
                    .as("A's own again")
                    .containsExactly(new ACL(ZooDefs.Perms.ALL, new Id("digest", digest("app-a:secret-a"))));
        }
    }
}
