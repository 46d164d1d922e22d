package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SelfSignedCertificateTest {

    @Test
    void theStoreAndThePemFilesHoldOneCertificateForTheLoopbackAddress(@TempDir Path dir) throws Exception {
        SelfSignedCertificate made = SelfSignedCertificate.forLoopback(dir, "server");

        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(made.keyStore())) {
            store.load(in, SelfSignedCertificate.PASSWORD.toCharArray());
        }
        X509Certificate certificate = (X509Certificate) store.getCertificate("server");
        assertThat(certificate.getSubjectX500Principal().getName()).isEqualTo("CN=127.0.0.1");
        assertThat(certificate.getSubjectAlternativeNames()).contains(java.util.List.of(7, "127.0.0.1"));
        assertThat(Files.readString(made.certificate()))
                .startsWith("-----BEGIN CERTIFICATE-----\n")
                .endsWith("-----END CERTIFICATE-----\n");
        assertThat(Files.readString(made.privateKey())).startsWith("-----BEGIN PRIVATE KEY-----\n");
    }

    @Test
    void aRedisServerServesTlsWithIt(@TempDir Path dir) {
        SelfSignedCertificate made = SelfSignedCertificate.forLoopback(dir, "redis");
        try (RedisServer server =
                RedisServer.builder().tls(made.certificate(), made.privateKey()).start()) {
            assertThat(server.uri()).startsWith("rediss://127.0.0.1:");
            assertThat(FreePorts.accepts(server.port())).isTrue();
        }
    }
}
