package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.SelfSignedCertificate;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code rediss://} against a redis-server that speaks only TLS, with self-signed certificates. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisTlsTest {
    @TempDir
    static Path dir;

    private static SelfSignedCertificate serverKeys;

    @RegisterExtension
    static final ServerExtension<RedisServer> SERVER = ServerExtension.perClass(() -> {
        serverKeys = keyPair("server", "CN=localhost", "ip:127.0.0.1");
        return RedisServer.builder()
                .tls(serverKeys.certificate(), serverKeys.privateKey())
                .start();
    });

    private static SelfSignedCertificate keyPair(String name, String subject, String san) {
        return SelfSignedCertificate.create(dir, name, subject, san);
    }

    @Test
    void locksWorkOverTls() {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("rediss://127.0.0.1:" + SERVER.get().port() + "?verifyPeer=NONE")
                .build()) {
            DistributedLock lock = cerberus.lock("tls");
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.lease().fencingToken()).isPositive();
            lock.unlock();
        }
    }

    @Test
    void anUntrustedCertificateIsRefusedClearly() {
        String uri = "rediss://127.0.0.1:" + SERVER.get().port();
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(uri)
                        .connectTimeout(Duration.ofSeconds(3))
                        .build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(uri);
    }

    @Test
    void aTrustedCertificateForAnotherHostIsRefusedUnlessOnlyTheCertificateIsChecked() throws Exception {
        SelfSignedCertificate other = keyPair("other-host", "CN=cache.example", "dns:cache.example");
        Path otherStore = other.keyStore();
        try (RedisServer impostor = RedisServer.builder()
                .tls(other.certificate(), other.privateKey())
                .start()) {
            RedisOptions trusting = RedisOptions.builder()
                    .trustStore(otherStore, SelfSignedCertificate.PASSWORD.toCharArray())
                    .build();
            String uri = "rediss://127.0.0.1:" + impostor.port();
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(uri, trusting)
                            .connectTimeout(Duration.ofSeconds(3))
                            .build())
                    .as("a certificate the client trusts, issued for cache.example, from 127.0.0.1")
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(uri);
            try (Cerberus caOnly =
                    Cerberus.builder().engine(uri + "?verifyPeer=CA", trusting).build()) {
                assertThat(caOnly.lock("ca-only").tryLock())
                        .as("the same certificate, its host name not checked")
                        .isTrue();
            }
        }
    }

    @Test
    void optionsNeverShowTheirPasswords() {
        RedisOptions options = RedisOptions.builder()
                .user("app")
                .password("pw-main".toCharArray())
                .trustStore(serverKeys.keyStore(), "pw-trust".toCharArray())
                .keyStore(serverKeys.keyStore(), "pw-key".toCharArray())
                .build();
        assertThat(options.toString()).contains("user=app").doesNotContain("pw-main", "pw-trust", "pw-key");
    }

    @Test
    void plainTextToATlsPortFailsWithinTheTimeout() {
        String uri = "redis://127.0.0.1:" + SERVER.get().port();
        long start = System.nanoTime();
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(uri)
                        .connectTimeout(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(uri);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    }

    @Test
    void aTrustStoreFromTheOptionsVerifiesTheServerFully() {
        RedisOptions trusting = RedisOptions.builder()
                .trustStore(serverKeys.keyStore(), SelfSignedCertificate.PASSWORD.toCharArray())
                .build();
        try (Cerberus cerberus = Cerberus.builder()
                .engine("rediss://127.0.0.1:" + SERVER.get().port(), trusting)
                .build()) {
            DistributedLock lock = cerberus.lock("verified");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void aServerThatAsksForAClientCertificateGetsTheOneFromTheOptions() throws Exception {
        SelfSignedCertificate client = keyPair("client", "CN=cerberus-client", "ip:127.0.0.1");
        Path clientStore = client.keyStore();
        try (RedisServer mutual = RedisServer.builder()
                .tls(serverKeys.certificate(), serverKeys.privateKey())
                .args(
                        "--tls-auth-clients",
                        "yes",
                        "--tls-ca-cert-file",
                        client.certificate().toString())
                .start()) {
            String uri = "rediss://127.0.0.1:" + mutual.port();
            RedisOptions.Builder options = RedisOptions.builder()
                    .trustStore(serverKeys.keyStore(), SelfSignedCertificate.PASSWORD.toCharArray());
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(uri, options.build())
                            .connectTimeout(Duration.ofSeconds(3))
                            .build())
                    .as("no client certificate")
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(uri);
            try (Cerberus cerberus = Cerberus.builder()
                    .engine(
                            uri,
                            options.keyStore(clientStore, SelfSignedCertificate.PASSWORD.toCharArray())
                                    .build())
                    .build()) {
                DistributedLock lock = cerberus.lock("mutual");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
        }
    }
}
