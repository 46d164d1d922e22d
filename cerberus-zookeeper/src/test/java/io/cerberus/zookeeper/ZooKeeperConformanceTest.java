package io.cerberus.zookeeper;

import io.cerberus.Capability;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The ZooKeeper engine passes the engine conformance suite against a real ZooKeeper server. */
class ZooKeeperConformanceTest extends AbstractLockEngineConformanceTest {
    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> SERVER = ServerExtension.perClass(ZooKeeperServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri() + "/conformance?sessionTimeout=2s";
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(
                Capability.FENCING,
                Capability.FAIR,
                Capability.READ_WRITE,
                Capability.SESSION_BOUND,
                Capability.MULTI_PROCESS,
                Capability.INSPECT);
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("zk://127.0.0.1:" + FreePorts.next());
    }

    @Override
    protected Duration expiryBound() {
        return Duration.ofSeconds(6);
    }

    @Override
    protected boolean releasesByForce() {
        return true;
    }
}
