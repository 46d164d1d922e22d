package io.cerberus.etcd;

import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.Optional;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The etcd engine passes the engine conformance suite against a real etcd. */
class EtcdConformanceTest extends AbstractLockEngineConformanceTest {
    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri() + "?ttl=2";
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("etcd://127.0.0.1:" + FreePorts.next());
    }
}
