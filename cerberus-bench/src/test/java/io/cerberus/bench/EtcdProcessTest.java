package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The bench's reading of etcd's Prometheus text; no server needed. */
class EtcdProcessTest {

    private static final String METRICS = """
            # HELP grpc_server_msg_received_total Total number of RPC stream messages received on the server.
            # TYPE grpc_server_msg_received_total counter
            grpc_server_msg_received_total{grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 120
            grpc_server_msg_received_total{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3
            etcd_debugging_mvcc_keys_total 7
            etcd_debugging_mvcc_keys_total_other 1e+06""";

    @Test
    void aMetricIsTheSumOfItsLinesAndNaNWhenAbsent() {
        assertThat(EtcdProcess.sum(METRICS, "grpc_server_msg_received_total")).isEqualTo(123.0);
        assertThat(EtcdProcess.sum(METRICS, "etcd_debugging_mvcc_keys_total ")).as("the name ends at the space").isEqualTo(7.0);
        assertThat(EtcdProcess.sum(METRICS, "etcd_mvcc_db_total_size_in_use_in_bytes ")).isNaN();
        assertThat(EtcdProcess.sum("", "x")).isNaN();
    }
}
