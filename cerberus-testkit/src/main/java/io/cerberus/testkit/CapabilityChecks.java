package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * What each {@link Capability} promises, checked on a real engine in a few seconds: a capability
 * the engine declares does what it says, one it does not declare is refused (or, for
 * {@link Capability#MULTI_PROCESS}, is really not there). {@link #check} switches over the
 * constants without a default branch, so a new constant does not compile until it has a check.
 *
 * <p>Also the expected set ({@link #assertDeclaresExactly}): what an engine, a client of it and its provider declare
 * is exactly what the engine's test expects, so a capability dropped by mistake fails the build
 * instead of turning the cases that need it into skipped ones.
 */
final class CapabilityChecks {
    private final AbstractLockEngineConformanceTest suite;

    CapabilityChecks(AbstractLockEngineConformanceTest suite) {
        this.suite = suite;
    }

    /**
     * Asserts that the engine of {@code uri}, the client and the engine's provider declare exactly
     * the expected capabilities.
     *
     * @param uri the engine URI
     * @param client a client of that engine (used once, so its engine is open)
     * @param expected what the engine declares
     * @param expectedOfScheme what the provider declares for the URI's scheme (the union over the
     *     engines the scheme can open)
     */
    static void assertDeclaresExactly(
            String uri, Cerberus client, Set<Capability> expected, Set<Capability> expectedOfScheme) {
        try (LockEngine engine = Engines.open(uri, Duration.ofSeconds(10))) {
            assertThat(engine.capabilities())
                    .as("the capabilities of the engine %s", engine.describe())
                    .containsExactlyInAnyOrderElementsOf(expected);
        }
        assertThat(client.lock("capabilities-expected").isLocked()).isFalse();
        assertThat(client.capabilities())
                .as("the capabilities of a client of the engine")
                .containsExactlyInAnyOrderElementsOf(expected);
        String scheme = uri.substring(0, uri.indexOf(':')).toLowerCase(Locale.ROOT);
        EngineProvider provider = ServiceLoader.load(EngineProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(candidate -> candidate.schemes().contains(scheme))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no engine provider serves '" + scheme + ":'"));
        assertThat(provider.capabilities(scheme))
                .as("what %s declares for '%s:'", provider.getClass().getSimpleName(), scheme)
                .containsExactlyInAnyOrderElementsOf(expectedOfScheme)
                .containsAll(expected);
    }

    /** @return what the check of the capability shows, for the test's name */
    static String shows(Capability capability, boolean declared) {
        if (!declared) {
            return capability == Capability.MULTI_PROCESS
                    ? "not declared: a lock held in another process is not seen"
                    : "not declared: refused with UnsupportedCapabilityException";
        }
        return switch (capability) {
            case FENCING -> "declared: tokens strictly increase across holders";
            case FAIR -> "declared: two waiters are served in arrival order";
            case READ_WRITE -> "declared: two readers share, a writer is excluded and excludes";
            case SESSION_BOUND -> "declared: a hold outlives several leases with no renewal";
            case MULTI_PROCESS -> "declared: a lock held in another process is held here";
            case INSPECT -> "declared: inspect lists the hold with its holder";
        };
    }

    /**
     * Checks that the capability does what it says if declared, and is refused if not.
     *
     * @param capability the capability
     * @param declared whether the engine's test expects it
     * @throws Exception if a wait is interrupted
     */
    void check(Capability capability, boolean declared) throws Exception {
        switch (capability) {
            case FENCING -> fencing(declared);
            case FAIR -> fair(declared);
            case READ_WRITE -> readWrite(declared);
            case SESSION_BOUND -> sessionBound(declared);
            case MULTI_PROCESS -> multiProcess(declared);
            case INSPECT -> inspect(declared);
        }
    }

    private void fencing(boolean declared) throws Exception {
        if (!declared) {
            try (Lease lease = suite.client().lock("cap-fencing").acquire(Duration.ZERO)) {
                assertThatThrownBy(lease::fencingToken)
                        .isInstanceOf(UnsupportedCapabilityException.class)
                        .hasMessageContaining("gives no fencing tokens")
                        .hasMessageContaining("engines with fencing tokens");
            }
            return;
        }
        List<DistributedLock> holders =
                List.of(suite.client().lock("cap-fencing"), suite.client().lock("cap-fencing"));
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 4; i++) {
            try (Lease lease = holders.get(i % 2).acquire(TestTimes.millis(5000))) {
                assertThat(lease.fencingToken())
                        .as("the token of acquisition %d, by holder %d", i + 1, i % 2)
                        .isGreaterThan(previous);
                previous = lease.fencingToken();
            }
        }
    }

    private void fair(boolean declared) throws Exception {
        if (!declared) {
            assertThatThrownBy(() -> suite.client().fairLock("cap-fair"))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("fair locks")
                    .hasMessageContaining("engines with fair locks");
            return;
        }
        DistributedLock holder = suite.client().fairLock("cap-fair");
        holder.lock();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<Thread> waiters = new ArrayList<>();
        for (String label : List.of("first", "second")) {
            waiters.add(suite.queuedFairWaiter("cap-fair", label, order));
        }
        holder.unlock();
        for (Thread waiter : waiters) {
            AbstractLockEngineConformanceTest.join(waiter);
        }
        assertThat(order).as("the order the waiters got the fair lock in").containsExactly("first", "second");
    }

    private void readWrite(boolean declared) {
        if (!declared) {
            assertThatThrownBy(() -> suite.client().readWriteLock("cap-rw"))
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("read-write locks");
            return;
        }
        DistributedReadWriteLock reader = suite.client().readWriteLock("cap-rw");
        DistributedReadWriteLock otherReader = suite.client().readWriteLock("cap-rw");
        DistributedReadWriteLock writer = suite.client().readWriteLock("cap-rw");
        assertThat(reader.readLock().tryLock()).isTrue();
        assertThat(otherReader.readLock().tryLock())
                .as("a second reader shares")
                .isTrue();
        assertThat(writer.writeLock().tryLock()).as("a writer beside readers").isFalse();
        reader.readLock().unlock();
        otherReader.readLock().unlock();
        assertThat(writer.writeLock().tryLock())
                .as("a writer once the readers left")
                .isTrue();
        assertThat(reader.readLock().tryLock()).as("a reader beside a writer").isFalse();
        writer.writeLock().unlock();
    }

    private void sessionBound(boolean declared) throws Exception {
        Duration lease = suite.shortLease();
        Cerberus counting = suite.countingClient(lease);
        CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
        DistributedLock mine = counting.lock("cap-session");
        mine.lock();
        long renewalsBefore = engine.renewals();
        DistributedLock theirs = suite.client().lock("cap-session");
        assertThat(theirs.tryLock(lease.multipliedBy(5).dividedBy(2).toMillis(), TimeUnit.MILLISECONDS))
                .as("taken from a holder during two and a half of its leases")
                .isFalse();
        assertThat(mine.lease().isValid()).isTrue();
        long renewals = engine.renewals() - renewalsBefore;
        if (declared) {
            assertThat(renewals)
                    .as("renewals of a hold bound to the client's session")
                    .isZero();
        } else {
            assertThat(renewals)
                    .as("renewals of a hold that expires unless renewed")
                    .isGreaterThanOrEqualTo(2);
        }
        mine.unlock();
    }

    private void multiProcess(boolean declared) throws Exception {
        try (ManagedProcess child = ClientProcess.start(suite.engineUri(), suite.namespace, Duration.ofSeconds(30))) {
            ClientProcess.lock(child, "exclusive", "cap-processes");
            DistributedLock here = suite.client().lock("cap-processes");
            if (!declared) {
                assertThat(here.tryLock())
                        .as("a lock held in another process on an engine not shared by processes")
                        .isTrue();
                here.unlock();
                return;
            }
            assertThat(here.tryLock()).as("a lock held in another process").isFalse();
            assertThat(child.ask("UNLOCK exclusive cap-processes", TestTimes.millis(10_000)))
                    .isEqualTo("UNLOCKED");
            assertThat(here.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("free once the other process let go")
                    .isTrue();
            here.unlock();
        }
    }

    private void inspect(boolean declared) throws InterruptedException {
        if (!declared) {
            assertThatThrownBy(() -> suite.client().inspect("")).isInstanceOf(UnsupportedCapabilityException.class);
            return;
        }
        try (Lease lease = suite.client().lock("cap-inspect").acquire(Duration.ZERO)) {
            List<LockInfo> infos = suite.client().inspect("cap-inspect");
            assertThat(infos).as("the holds inspect lists").hasSize(1);
            LockInfo info = infos.get(0);
            assertThat(info.name()).isEqualTo("cap-inspect");
            assertThat(info.mode()).isEqualTo("exclusive");
            assertThat(info.holder())
                    .as("the holder names this process")
                    .contains(Long.toString(ProcessHandle.current().pid()));
            if (suite.expectedCapabilities().contains(Capability.FENCING)) {
                assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
            }
        }
        assertThat(suite.client().inspect("cap-inspect"))
                .as("the holds after the release")
                .isEmpty();
    }
}
