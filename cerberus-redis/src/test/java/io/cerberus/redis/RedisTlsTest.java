package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
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

    @BeforeAll
    static void startServer() throws Exception {
        Path store = dir.resolve("server.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process generate = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", "redis", "-keyalg", "RSA",
                "-keysize", "2048", "-dname", "CN=localhost", "-ext", "san=ip:127.0.0.1", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit"))
                .redirectErrorStream(true).start();
        String output = new String(generate.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(generate.waitFor()).as("keytool: %s", output).isZero();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, "changeit".toCharArray());
        }
        Base64.Encoder pem = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        PrivateKey key = (PrivateKey) keys.getKey("redis", "changeit".toCharArray());
        Path keyFile = Files.writeString(dir.resolve("server.key"),
                "-----BEGIN PRIVATE KEY-----\n" + pem.encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n");
        Path certFile = Files.writeString(dir.resolve("server.crt"),
                "-----BEGIN CERTIFICATE-----\n" + pem.encodeToString(keys.getCertificate("redis").getEncoded()) + "\n-----END CERTIFICATE-----\n");
        server = RedisServer.startTls(certFile, keyFile);
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
    void plainTextToATlsPortFailsWithinTheTimeout() {
        String uri = "redis://127.0.0.1:" + server.port();
        long start = System.nanoTime();
        assertThatThrownBy(() -> Cerberus.builder().engine(uri).connectTimeout(Duration.ofSeconds(1)).build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(uri);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    }
}
