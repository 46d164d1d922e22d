package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.FaultProxy;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A write whose request reached etcd but whose answer never came back: the outcome is unknown to
 * the sender, and a blind resend would write a second time. The cut is made by a {@link FaultProxy}
 * that delays every chunk by a second each way; a client straight to etcd sees the write land, and
 * the proxy then resets the connection while the answer is still held, and passes again, so a
 * resend would go through.
 *
 * <p>jetcd (0.8.5 on, the floor the build enforces) fails such a put with UNAVAILABLE and does not
 * send it again. This engine does resend unanswered requests ({@link EtcdRequests}), so each of
 * its writes is a transaction guarded by a compare: the resent copy finds the first one's key and
 * writes nothing.
 */
class UnansweredWriteTest {
    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    private static final long DELAY_MILLIS = 1_000;

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    @Test
    void aPutWhoseAnswerIsCutFailsAndIsNotSentAgain() throws Exception {
        ByteSequence key = bytes("unanswered/put");
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", SERVER.get().port());
                Client proxied = Client.builder()
                        .endpoints("http://127.0.0.1:" + proxy.port())
                        .build();
                Client direct =
                        Client.builder().endpoints(SERVER.get().endpoint()).build()) {
            proxied.getKVClient().get(bytes("unanswered/warm-up")).get(10, TimeUnit.SECONDS); // connected while passing
            proxy.delay(DELAY_MILLIS);
            CompletableFuture<?> put = proxied.getKVClient().put(key, bytes("once"));
            cutTheAnswerOnceWritten(proxy, direct, key);

            assertThatThrownBy(() -> put.get(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the caller learns the outcome is unknown, rather than a resend's answer")
                    .isInstanceOf(ExecutionException.class)
                    .hasMessageContaining("UNAVAILABLE");
            KeyValue written = only(direct, key, false);
            assertThat(written.getVersion()).as("the put was carried out once").isEqualTo(1);
            assertThat(written.getModRevision()).isEqualTo(written.getCreateRevision());
        }
    }

    @Test
    void anAcquireWhoseAnswerIsCutIsSentAgainWithoutASecondWrite() throws Exception {
        LockKey lock = new LockKey("unanswered", "acquire");
        ByteSequence directory = bytes("cerberus/unanswered/acquire/");
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", SERVER.get().port());
                LockEngine engine = Engines.open("etcd://127.0.0.1:" + proxy.port(), TestTimes.millis(10_000));
                Client direct =
                        Client.builder().endpoints(SERVER.get().endpoint()).build()) {
            Acquisition attempt = new Acquisition(
                    lock, LockMode.EXCLUSIVE, "0123456789abcdef0123456789abcdef", "test", Duration.ofSeconds(30));
            proxy.delay(DELAY_MILLIS);
            CompletableFuture<AcquireResult> acquired = CompletableFuture.supplyAsync(() -> engine.tryAcquire(attempt));
            cutTheAnswerOnceWritten(proxy, direct, directory);

            AcquireResult result = acquired.get(TestTimes.millis(15_000).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(result)
                    .as("the resent transaction finds the attempt's own key")
                    .isInstanceOf(AcquireResult.Granted.class);
            KeyValue written = only(direct, directory, true);
            assertThat(written.getVersion())
                    .as("the key was written once, by the first copy")
                    .isEqualTo(1);
            assertThat(written.getModRevision()).isEqualTo(written.getCreateRevision());
            assertThat(((AcquireResult.Granted) result).fencingToken()).isEqualTo(written.getCreateRevision());
            assertThat(engine.release(attempt)).isTrue();
        }
    }

    /**
     * Waits until {@code key} (or a key under it) is in etcd, the proxy still holding the answer,
     * then resets the connection and lets traffic pass again.
     */
    private static void cutTheAnswerOnceWritten(FaultProxy proxy, Client direct, ByteSequence key) {
        try {
            Poll.until(
                    "the write to reach etcd",
                    TestTimes.millis(10_000),
                    () -> !read(direct, key, true).isEmpty());
        } finally {
            proxy.mode(FaultProxy.Mode.DROP);
            proxy.mode(FaultProxy.Mode.PASS);
        }
    }

    private static KeyValue only(Client direct, ByteSequence key, boolean prefix) {
        List<KeyValue> found = read(direct, key, prefix);
        assertThat(found).as("keys at %s", key).hasSize(1);
        return found.get(0);
    }

    private static List<KeyValue> read(Client direct, ByteSequence key, boolean prefix) {
        try {
            return direct.getKVClient()
                    .get(key, GetOption.builder().isPrefix(prefix).build())
                    .get(10, TimeUnit.SECONDS)
                    .getKvs();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + key + " from etcd", e);
        }
    }
}
