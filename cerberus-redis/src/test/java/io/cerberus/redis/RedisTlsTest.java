package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.RedisServer;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code rediss://} against a redis-server that speaks only TLS, with a self-signed certificate made by keytool. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisTlsTest {
    @TempDir
    static Path dir;
    private static RedisServer server;

    private static Path serverStore;
    private static Path serverCert;
    private static Path serverKey;

    @BeforeAll
    static void startServer() throws Exception {
        serverStore = keyPair("server", "CN=localhost");
        serverCert = dir.resolve("server.crt");
        serverKey = dir.resolve("server.key");
        server = RedisServer.builder().tls(serverCert, serverKey).start();
    }

    /** Makes a self-signed key pair with keytool: NAME.p12 (password changeit), NAME.crt and NAME.key (PEM). */
    private static Path keyPair(String name, String subject) throws Exception {
        return keyPair(name, subject, "ip:127.0.0.1");
    }

    /** @param san the certificate's subject alternative name, e.g. {@code ip:127.0.0.1} or {@code dns:host.example} */
    private static Path keyPair(String name, String subject, String san) throws Exception {
        Path store = dir.resolve(name + ".p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process generate = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "RSA",
                "-keysize", "2048", "-dname", subject, "-ext", "san=" + san, "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit"))
                .redirectErrorStream(true).start();
        String output = new String(generate.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(generate.waitFor()).as("keytool: %s", output).isZero();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, "changeit".toCharArray());
        }
        Base64.Encoder pem = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        PrivateKey key = (PrivateKey) keys.getKey(name, "changeit".toCharArray());
        Files.writeString(dir.resolve(name + ".key"),
                "-----BEGIN PRIVATE KEY-----\n" + pem.encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n");
        Files.writeString(dir.resolve(name + ".crt"),
                "-----BEGIN CERTIFICATE-----\n" + pem.encodeToString(keys.getCertificate(name).getEncoded()) + "\n-----END CERTIFICATE-----\n");
        return store;
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void locksWorkOverTls() {
        try (Cerberus cerberus = Cerberus.builder().engine("rediss://127.0.0.1:" + server.port() + "?verifyPeer=NONE").build()) {
            DistributedLock lock = cerberus.lock("tls");
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.lease().fencingToken()).isPositive();
            lock.unlock();
        }
    }

    @Test
    void anUntrustedCertificateIsRefusedClearly() {
        String uri = "rediss://127.0.0.1:" + server.port();
        assertThatThrownBy(() -> Cerberus.builder().engine(uri).connectTimeout(Duration.ofSeconds(3)).build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(uri);
    }

    @Test
    void aTrustedCertificateForAnotherHostIsRefusedUnlessOnlyTheCertificateIsChecked() throws Exception {
        Path otherStore = keyPair("other-host", "CN=cache.example", "dns:cache.example");
        try (RedisServer impostor = RedisServer.builder().tls(dir.resolve("other-host.crt"), dir.resolve("other-host.key")).start()) {
            RedisOptions trusting = RedisOptions.builder().trustStore(otherStore, "changeit".toCharArray()).build();
            String uri = "rediss://127.0.0.1:" + impostor.port();
            assertThatThrownBy(() -> Cerberus.builder().engine(uri, trusting).connectTimeout(Duration.ofSeconds(3)).build())
                    .as("a certificate the client trusts, issued for cache.example, from 127.0.0.1")
                    .isInstanceOf(EngineUnavailableException.class).hasMessageContaining(uri);
            try (Cerberus caOnly = Cerberus.builder().engine(uri + "?verifyPeer=CA", trusting).build()) {
                assertThat(caOnly.lock("ca-only").tryLock()).as("the same certificate, its host name not checked").isTrue();
            }
        }
    }

    @Test
    void optionsNeverShowTheirPasswords() {
        RedisOptions options = RedisOptions.builder().user("app").password("pw-main".toCharArray())
                .trustStore(serverStore, "pw-trust".toCharArray()).keyStore(serverStore, "pw-key".toCharArray()).build();
        assertThat(options.toString()).contains("user=app").doesNotContain("pw-main", "pw-trust", "pw-key");
    }

    @Test
    void plainTextToATlsPortFailsWithinTheTimeout() {
        String uri = "redis://127.0.0.1:" + server.port();
        long start = System.nanoTime();
        assertThatThrownBy(() -> Cerberus.builder().engine(uri).connectTimeout(Duration.ofSeconds(1)).build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(uri);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    }

    @Test
    void aTrustStoreFromTheOptionsVerifiesTheServerFully() {
        RedisOptions trusting = RedisOptions.builder().trustStore(serverStore, "changeit".toCharArray()).build();
        try (Cerberus cerberus = Cerberus.builder().engine("rediss://127.0.0.1:" + server.port(), trusting).build()) {
            DistributedLock lock = cerberus.lock("verified");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void aServerThatAsksForAClientCertificateGetsTheOneFromTheOptions() throws Exception {
        Path clientStore = keyPair("client", "CN=cerberus-client");
        try (RedisServer mutual = RedisServer.builder().tls(serverCert, serverKey).args("--tls-auth-clients", "yes",
                "--tls-ca-cert-file", dir.resolve("client.crt").toString()).start()) {
            String uri = "rediss://127.0.0.1:" + mutual.port();
            RedisOptions.Builder options = RedisOptions.builder().trustStore(serverStore, "changeit".toCharArray());
            assertThatThrownBy(() -> Cerberus.builder().engine(uri, options.build()).connectTimeout(Duration.ofSeconds(3)).build())
                    .as("no client certificate")
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(uri);
            try (Cerberus cerberus = Cerberus.builder().engine(uri, options.keyStore(clientStore, "changeit".toCharArray()).build())
                    .build()) {
                DistributedLock lock = cerberus.lock("mutual");
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
        }
    }
}
