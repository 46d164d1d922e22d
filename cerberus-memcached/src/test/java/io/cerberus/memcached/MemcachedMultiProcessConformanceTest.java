package io.cerberus.memcached;

import io.cerberus.servers.MemcachedServer;
import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The memcached engine passes the multi-process conformance suite: killed and paused holders in child JVMs. */
class MemcachedMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    private static MemcachedServer server;

    @BeforeAll
    static void startServer() {
        server = MemcachedServer.builder().memoryMb(16).start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        return server.uri();
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
