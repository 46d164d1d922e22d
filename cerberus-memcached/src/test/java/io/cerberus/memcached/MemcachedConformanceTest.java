package io.cerberus.memcached;

import io.cerberus.Capability;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.MemcachedServer;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The memcached engine passes the engine conformance suite against a real memcached. */
class MemcachedConformanceTest extends AbstractLockEngineConformanceTest {
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

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("memcached://127.0.0.1:" + FreePorts.next());
    }

    /** Whole seconds: memcached's expiries are, and a lease under one would be rounded up to two anyway. */
    @Override
    protected Duration shortLease() {
        return Duration.ofSeconds(1);
    }

    /**
     * An entry lives up to one second past its lease (the lease rounded up to whole seconds, plus
     * the second memcached's clock may lag: {@link MemcachedStore#expiryFor}), then the waiter sees
     * it within one backoff pause; one more second for a loaded machine, as for every engine.
     */
    @Override
    protected Duration expiryBound() {
        return TestTimes.millis(2000);
    }
}
