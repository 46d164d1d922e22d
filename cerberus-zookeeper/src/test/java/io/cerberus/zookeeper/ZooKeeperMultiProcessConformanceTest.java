package io.cerberus.zookeeper;

import io.cerberus.Capability;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Holders in separate JVMs on one ZooKeeper server; a killed or paused holder's lock is freed when its session expires. */
class ZooKeeperMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> SERVER = ServerExtension.perClass(ZooKeeperServer::start);

    @Override
    protected String engineUri() {
        // no sessionTimeout: the session follows each client's default lease (the children's 800 ms)
        return SERVER.uri() + "/multi";
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
    protected Duration serverRounding() {
        return Duration.ofMillis(
                200); // the server's tickTime (ZooKeeperServer's default): sessions are expired on tick boundaries
    }
}
