package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.FaultProxy;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fair waiter that gives up while etcd does not answer cannot delete its key then; its client lives on, and so
 * does its lease, which would keep the key — and block every later waiter of the fair lock — for the rest of the
 * client's life. The key is deleted again once etcd answers, and the next waiter is granted the lock.
 */
class LeftBehindKeysTest {
    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    private static final String NAMESPACE = "left-behind";

    @Test
    void aWaitersKeyWhoseDeleteFailedIsDeletedOnceEtcdAnswersAndTheFairQueueMovesOn() throws Exception {
        String direct = "etcd://" + SERVER.get().endpoint().replace("http://", "") + "?ttl=30";
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", SERVER.get().port());
                Cerberus holder = client(direct);
                Cerberus cutOff = client("etcd://127.0.0.1:" + proxy.port() + "?ttl=30");
                Cerberus next = client(direct);
                Client etcd =
                        Client.builder().endpoints(SERVER.get().endpoint()).build()) {
            Lease held = holder.fairLock("queue").acquire(Duration.ofSeconds(10));
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return cutOff.fairLock("queue").acquire(Duration.ofSeconds(3));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Poll.until("the waiter's key is in the queue", Duration.ofSeconds(10), () -> keys(etcd) == 2);
            proxy.mode(FaultProxy.Mode.DROP);
            assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS))
                    .as("the waiter gave up while etcd did not answer it")
                    .hasRootCauseInstanceOf(Exception.class);
            proxy.mode(FaultProxy.Mode.PASS);
            held.close();

            try (Lease granted = next.fairLock("queue").acquire(Duration.ofSeconds(10))) {
                assertThat(granted.fencingToken()).isPositive();
            }
            // a create the client library sent while etcd did not answer may land late: it is deleted too
            Poll.until("no key left behind", Duration.ofSeconds(10), () -> keys(etcd) == 0);
        }
    }

    private static Cerberus client(String uri) {
        return Cerberus.builder()
                .engine(uri)
                .namespace(NAMESPACE)
                .connectTimeout(Duration.ofSeconds(1))
                .build();
    }

    private static long keys(Client etcd) {
        try {
            ByteSequence prefix = ByteSequence.from("cerberus/" + NAMESPACE + "/queue/", StandardCharsets.UTF_8);
            return etcd.getKVClient()
                    .get(
                            prefix,
                            GetOption.builder()
                                    .isPrefix(true)
                                    .withCountOnly(true)
                                    .build())
                    .get(10, TimeUnit.SECONDS)
                    .getCount();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
