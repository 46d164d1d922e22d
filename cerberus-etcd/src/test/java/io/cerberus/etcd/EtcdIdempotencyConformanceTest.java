package io.cerberus.etcd;

import io.cerberus.servers.EtcdServer;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.ServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The etcd idempotency store passes the store conformance suite against a real etcd. */
class EtcdIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri() + "?ttl=2";
    }
}
