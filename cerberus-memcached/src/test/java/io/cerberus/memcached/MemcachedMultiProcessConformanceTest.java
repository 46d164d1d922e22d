package io.cerberus.memcached;

import io.cerberus.Capability;
import io.cerberus.servers.MemcachedServer;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The memcached engine passes the multi-process conformance suite: killed and paused holders in child JVMs. */
class MemcachedMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    @RegisterExtension
    static final ServerExtension<MemcachedServer> SERVER = ServerExtension.perClass(
            () -> MemcachedServer.builder().memoryMb(16).start());

    @Override
    protected String engineUri() {
        return SERVER.uri();
    }

    @Override
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(Capability.MULTI_PROCESS);
    }

    /**
     * Whole seconds, and long enough that a holder killed just after a renewal is not freed before
     * half its silent expiry: the entry lives more than the lease after the last renewal (up to a
     * second less than the lease plus one), and that renewal may be a third of the lease before the kill.
     */
    @Override
    protected Duration shortLease() {
        return Duration.ofSeconds(4);
    }

    /** The second added on top of the rounded-up lease ({@link MemcachedStore#expiryFor}). */
    @Override
    protected Duration serverRounding() {
        return Duration.ofSeconds(1);
    }
}
