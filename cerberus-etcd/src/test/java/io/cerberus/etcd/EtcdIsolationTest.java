package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Per-application isolation enforced by etcd itself: one user and role per application, the role
 * granted only the prefix of the application's namespace ({@code cerberus/<namespace>/}), which
 * holds its locks and its idempotency records.
 */
class EtcdIsolationTest {
    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        server = EtcdServer.start();
        server.ctl("user", "add", "root", "--new-user-password=r00t-secret");
        server.ctl("user", "grant-role", "root", "root");
        for (String app : new String[] {"appA", "appB"}) {
            server.ctl("role", "add", app);
            server.ctl("role", "grant-permission", app, "readwrite", "cerberus/" + app + "/", "--prefix=true");
            server.ctl("user", "add", app, "--new-user-password=" + app + "-secret");
            server.ctl("user", "grant-role", app, app);
        }
        server.ctl("auth", "enable");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static Cerberus app(String user, String namespace) {
        return Cerberus.builder().engine(server.uri("ttl=2").replace("etcd://", "etcd://" + user + ":" + user + "-secret@"))
                .namespace(namespace).connectTimeout(Duration.ofSeconds(3)).build();
    }

    @Test
    void eachAppLocksAndGuardsInItsOwnNamespaceWithItsOwnRole() throws Exception {
        try (Cerberus a = app("appA", "appA"); Cerberus b = app("appB", "appB")) {
            DistributedLock lock = a.lock("order:1");
            assertThat(lock.tryLock()).isTrue();
            assertThat(b.lock("order:1").tryLock()).as("same name, other app: another lock").isTrue();
            b.lock("order:1").unlock();
            assertThat(a.inspect("")).extracting(info -> info.name()).containsExactly("order:1");
            lock.unlock();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-1");
            assertThat(a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged").status())
                    .isEqualTo(Outcome.Status.EXECUTED);
            assertThat(b.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged").status())
                    .as("the same key in another app's namespace is another record").isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Test
    void appBsCredentialsCannotReadReleaseOrBlockAppAsLocksAndRecords() throws Exception {
        try (Cerberus a = app("appA", "appA"); Cerberus intruder = app("appB", "appA")) {
            DistributedLock lock = a.lock("order:2");
            assertThat(lock.tryLock()).isTrue();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-2");
            a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged");
            try {
                assertThatThrownBy(() -> intruder.lock("order:2").tryLock()).as("taking or blocking")
                        .hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> intruder.lock("order:2").isLocked()).as("reading").hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> intruder.inspect("")).as("listing").hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> intruder.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "again"))
                        .as("reading or claiming A's records").hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> server.ctl("--user", "appB:appB-secret", "get", "cerberus/appA/", "--prefix"))
                        .as("B's etcdctl may not read A's keys").hasMessageContaining("permission denied");
                assertThatThrownBy(() -> server.ctl("--user", "appB:appB-secret", "del", "cerberus/appA/", "--prefix"))
                        .as("nor delete them").hasMessageContaining("permission denied");
            } finally {
                assertThat(lock.lease().isValid()).as("A's lock is untouched").isTrue();
                lock.unlock();
            }
            assertThat(a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "again").status())
                    .as("A's record is untouched").isEqualTo(Outcome.Status.REPLAYED);
        }
    }
}
