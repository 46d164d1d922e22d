package io.cerberus.etcd;

import io.cerberus.Capability;
import io.cerberus.servers.EtcdServer;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The etcd engine passes the multi-process conformance suite: a killed or paused child's keys go
 * when its client lease ends on the server. The URI sets no TTL, so the lease follows the child's
 * default lease (800 ms, rounded up to 1 s, which etcd raises to its minimum of 2 s): one meaning of
 * lease on every engine, within the server's rounding.
 */
class EtcdMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    /** etcd's shortest TTL with its default election timeout (1.5 timeouts, rounded up). */
    private static final int MIN_TTL_SECONDS = 2;

    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri();
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
    protected Duration serverRounding() {
        // the server raises the child's TTL to its minimum, and checks for expired leases twice a second
        return Duration.ofSeconds(MIN_TTL_SECONDS).minus(shortLease()).plus(Duration.ofMillis(500));
    }
}
