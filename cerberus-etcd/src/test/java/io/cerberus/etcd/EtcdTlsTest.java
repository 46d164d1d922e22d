package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.SelfSignedCertificate;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code etcds://} against an etcd that speaks TLS to clients, with a self-signed certificate. */
class EtcdTlsTest {
    @TempDir
    static Path dir;

    private static SelfSignedCertificate certificate;

    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(() -> {
        certificate = SelfSignedCertificate.forLoopback(dir, "server");
        return EtcdServer.builder()
                .tls(certificate.certificate(), certificate.privateKey())
                .start();
    });

    @Test
    void locksWorkOverTlsWithTheGivenTrust() {
        String uri = SERVER.get().uri() + "?ttl=2&ca=" + certificate.certificate();
        try (Cerberus cerberus = Cerberus.builder().engine(uri).namespace("tls").build()) {
            DistributedLock lock = cerberus.lock("tls");
            assertThat(lock.tryLock()).isTrue();
            assertThat(lock.lease().fencingToken()).isPositive();
            lock.unlock();
        }
    }

    @Test
    void untrustedCertificateFailsCleanly() {
        String uri = SERVER.get().uri() + "?ttl=2";
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(uri)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("etcds://127.0.0.1");
    }
}
