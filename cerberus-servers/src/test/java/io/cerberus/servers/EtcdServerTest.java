package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Needs etcd and etcdctl installed: a missing one fails with the package to install (etcd-server, etcd-client). */
class EtcdServerTest {

    @Test
    void startsHealthyAndAnswersMetricsAndEtcdctl() {
        try (EtcdServer server = EtcdServer.start()) {
            assertThat(server.uri()).isEqualTo("etcd://127.0.0.1:" + server.port());
            assertThat(server.endpoint()).isEqualTo("http://127.0.0.1:" + server.port());
            assertThat(server.healthy()).isTrue();
            assertThat(server.isLeader()).as("a single member leads").isTrue();
            assertThat(server.gauge("etcd_server_has_leader")).isEqualTo(1.0);
            assertThat(server.version()).matches("\\d+\\.\\d+\\.\\d+");
            assertThat(server.counter("grpc_server_started_total{grpc_method=\"Put\""))
                    .as("none yet: no line, 0")
                    .isZero();
            server.ctl("put", "k", "v");
            assertThat(server.ctl("get", "k", "--print-value-only")).isEqualTo("v\n");
            assertThat(server.counter("grpc_server_started_total{grpc_method=\"Put\""))
                    .isEqualTo(1);
            assertThatThrownBy(() -> server.gauge("no_such_metric"))
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("reports no metric no_such_metric");
        }
    }

    @Test
    void aKilledMemberRestartsWithItsDataAndAPausedOneIsHealed(@TempDir Path dir) {
        try (EtcdServer server = EtcdServer.builder().dir(dir.resolve("data")).start()) {
            server.ctl("put", "kept", "yes");
            server.kill();
            assertThat(server.healthy()).isFalse();
            server.restart();
            assertThat(server.ctl("get", "kept", "--print-value-only")).isEqualTo("yes\n");
            server.pause();
            assertThat(server.healthy()).isFalse();
            server.heal();
            assertThat(server.healthy()).isTrue();
        }
        assertThat(dir.resolve("data"))
                .as("a directory the caller gave is kept")
                .isDirectory();
    }

    @Test
    void tlsNeedsACertificateAndAKey() {
        assertThatThrownBy(() ->
                        EtcdServer.builder().tls(Path.of("server.crt"), null).start())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("both a certificate and a key");
    }

    @Test
    void aMetricIsTheSumOfItsLinesAndAbsentWhenNoLineHasIt() {
        String metrics = """
                # TYPE grpc_server_msg_received_total counter
                grpc_server_msg_received_total{grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 120
                grpc_server_msg_received_total{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3
                etcd_debugging_mvcc_keys_total 7
                etcd_debugging_mvcc_keys_total_other 1e+06""";
        assertThat(EtcdMetrics.sum(metrics, "grpc_server_msg_received_total")).hasValue(123.0);
        assertThat(EtcdMetrics.sum(metrics, "etcd_debugging_mvcc_keys_total "))
                .as("the name ends at the space")
                .hasValue(7.0);
        assertThat(EtcdMetrics.sum(metrics, "etcd_mvcc_db_total_size_in_use_in_bytes "))
                .isEmpty();
        assertThat(EtcdMetrics.sum("", "x")).isEmpty();
    }
}
