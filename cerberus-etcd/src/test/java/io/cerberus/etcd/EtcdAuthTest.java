package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.EtcdServer;
import io.cerberus.testkit.ServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** User and password against an etcd with authentication enabled. */
class EtcdAuthTest {
    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdAuthTest::startWithAuthentication);

    /** @return an etcd whose root user has the password r00t-secret, with authentication on */
    private static EtcdServer startWithAuthentication() {
        EtcdServer server = EtcdServer.start();
        try {
            server.ctl("user", "add", "root", "--new-user-password=r00t-secret");
            server.ctl("user", "grant-role", "root", "root");
            server.ctl("auth", "enable");
            return server;
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    private static String uri(String userInfo) {
        return (SERVER.uri() + "?ttl=2").replace("etcd://", "etcd://" + userInfo + "@");
    }

    @Test
    void userAndPasswordFromTheUriAreUsed() {
        try (Cerberus cerberus = Cerberus.builder()
                .engine(uri("root:r00t-secret"))
                .namespace("auth")
                .build()) {
            DistributedLock lock = cerberus.lock("guarded");
            assertThat(lock.tryLock()).isTrue();
            assertThat(cerberus.lock("guarded").isLocked()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void wrongPasswordFailsCleanlyWithoutShowingIt() {
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(uri("root:wrong-secret"))
                        .connectTimeout(Duration.ofSeconds(3))
                        .build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("//****@127.0.0.1")
                .hasMessageNotContaining("wrong-secret");
    }
}
