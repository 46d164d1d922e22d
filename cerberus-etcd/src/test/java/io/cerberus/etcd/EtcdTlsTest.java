package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.servers.EtcdServer;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code etcds://} against an etcd that speaks TLS to clients, with a self-signed certificate made by keytool. */
class EtcdTlsTest {
    private static Path dir;
    private static EtcdServer server;

    @BeforeAll
    static void startServer() throws Exception {
        dir = Files.createTempDirectory("cerberus-etcd-tls-");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Path store = dir.resolve("server.p12");
        Process generate = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", "server", "-keyalg", "RSA",
                "-keysize", "2048", "-dname", "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit"))
                .redirectErrorStream(true).start();
        String output = new String(generate.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(generate.waitFor()).as("keytool: %s", output).isZero();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, "changeit".toCharArray());
        }
        Base64.Encoder pem = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        PrivateKey key = (PrivateKey) keys.getKey("server", "changeit".toCharArray());
        Files.writeString(dir.resolve("server.key"),
                "-----BEGIN PRIVATE KEY-----\n" + pem.encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n");
        Files.writeString(dir.resolve("server.crt"), "-----BEGIN CERTIFICATE-----\n"
                + pem.encodeToString(keys.getCertificate("server").getEncoded()) + "\n-----END CERTIFICATE-----\n");
        server = EtcdServer.builder().tls(dir.resolve("server.crt"), dir.resolve("server.key")).start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void locksWorkOverTlsWithTheGivenTrust() {
        String uri = server.uri() + "?ttl=2&ca=" + dir.resolve("server.crt");
        try (Cerberus cerberus = Cerberus.builder().engine(uri).namespace("tls").build()) {
            DistributedLock lock = cerberus.lock("tls");
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.lease().fencingToken()).isPositive();
            lock.unlock();
        }
    }

    @Test
    void untrustedCertificateFailsCleanly() {
        String uri = server.uri() + "?ttl=2";
        assertThatThrownBy(() -> Cerberus.builder().engine(uri).connectTimeout(Duration.ofSeconds(2)).build())
                .isInstanceOf(EngineUnavailableException.class).hasMessageContaining("etcds://127.0.0.1");
    }
}
