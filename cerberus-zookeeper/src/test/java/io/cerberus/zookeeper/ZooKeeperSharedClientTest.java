package io.cerberus.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.testkit.ServerExtension;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The engine on the application's own CuratorFramework ({@link ZooKeeperOptions#client}). */
class ZooKeeperSharedClientTest {
    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> SERVER = ServerExtension.perClass(ZooKeeperServer::start);

    private static CuratorFramework curator() {
        CuratorFramework client =
                CuratorFrameworkFactory.newClient(SERVER.uri().substring("zk://".length()), new RetryNTimes(3, 100));
        client.start();
        return client;
    }

    @Test
    void locksRunOnTheApplicationsClientWhichOutlivesTheCerberusClient() throws Exception {
        try (CuratorFramework curator = curator();
                Cerberus other = Cerberus.builder()
                        .engine(SERVER.uri() + "/shared")
                        .namespace("app")
                        .build()) {
            Cerberus shared = Cerberus.builder()
                    .engine("zk", "zk://curator/shared", ZooKeeperOptions.client(curator))
                    .namespace("app")
                    .build();
            DistributedLock lock = shared.lock("order:1");
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.lease().fencingToken()).isPositive();
            assertThat(other.lock("order:1").tryLock())
                    .as("the same lock, reached through its own connection")
                    .isFalse();
            lock.unlock();
            assertThat(other.lock("order:1").tryLock()).isTrue();
            other.lock("order:1").unlock();

            DistributedLock waiting = shared.lock("order:2");
            assertThat(other.lock("order:2").tryLock()).isTrue();
            assertThat(waiting.tryLock()).isFalse();
            shared.close();
            assertThat(curator.getState())
                    .as("closing Cerberus leaves the application's client open")
                    .isEqualTo(CuratorFrameworkState.STARTED);
            assertThat(curator.checkExists().forPath("/shared")).isNotNull();
            other.lock("order:2").unlock();
        }
    }

    @Test
    void theUriAndTheClientMustAgree() {
        try (CuratorFramework curator = curator()) {
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine("zk", SERVER.uri(), ZooKeeperOptions.client(curator))
                            .build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("zk://curator");
            assertThatThrownBy(() -> Cerberus.builder().engine("zk://curator/x").build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ZooKeeperOptions.client");
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine("zk", "zk://curator/x?user=a&password=b", ZooKeeperOptions.client(curator))
                            .build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("credentials");
        }
        CuratorFramework unstarted =
                CuratorFrameworkFactory.newClient(SERVER.uri().substring("zk://".length()), new RetryNTimes(1, 10));
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("zk", "zk://curator", ZooKeeperOptions.client(unstarted))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("start it");
    }
}
