package io.cerberus.etcd;

import io.cerberus.Capability;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
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
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(
                Capability.FENCING,
                Capability.FAIR,
                Capability.READ_WRITE,
                Capability.MULTI_PROCESS,
                Capability.INSPECT);
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("etcd://127.0.0.1:" + FreePorts.next());
    }

    @Override
    protected boolean releasesByForce() {
        return true;
    }
}
