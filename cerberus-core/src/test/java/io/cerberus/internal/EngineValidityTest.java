package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.ScriptedEngineProvider.Scripted;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The SPI hooks an engine uses to narrow what the core promises: validity less than the lease, and why a capability is missing. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EngineValidityTest {
    private static final double SCALE = Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1"));

    private final List<Cerberus> clients = new ArrayList<>();

    private Cerberus client(Duration lease) {
        Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + UUID.randomUUID())
                .defaultLease(lease)
                .build();
        clients.add(cerberus);
        return cerberus;
    }

    @AfterEach
    void close() {
        clients.forEach(Cerberus::close);
    }

    @Test
    void leaseTurnsInvalidWhenTheEnginesValidityEndsNotTheLease() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        Scripted engine = ScriptedEngineProvider.last;
        Duration lease = Duration.ofSeconds(4);
        engine.validity = Duration.ofSeconds(1);
        long start = System.nanoTime();
        DistributedLock lock = cerberus.lock("drifting");
        lock.lock(lease);
        Lease held = lock.lease();
        assertThat(held.isValid()).isTrue();
        pollUntil("the lease to turn invalid", Duration.ofMillis(bound(3000)), () -> !held.isValid());
        Duration invalidAfter = Duration.ofNanos(System.nanoTime() - start);
        assertThat(invalidAfter)
                .as("invalid once the validity, not the lease, has passed")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(1))
                .isLessThan(lease);
        assertThat(engine.isLocked(new io.cerberus.spi.LockKey(cerberus.namespace(), "drifting")))
                .as("the engine still keeps the lock: the client stopped counting on it first")
                .isTrue();
    }

    @Test
    void leaseOfAGrantMadeByAnEarlierRequestCountsFromThatRequest() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        Scripted engine = ScriptedEngineProvider.last;
        Duration lease = Duration.ofSeconds(3);
        engine.grantedAge = Duration.ofSeconds(2);
        long start = System.nanoTime();
        DistributedLock lock = cerberus.lock("handed");
        lock.lock(lease);
        Lease held = lock.lease();
        pollUntil("the lease to turn invalid", Duration.ofMillis(bound(3000)), () -> !held.isValid());
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("invalid a lease after the granting request, 2 s before this call")
                .isLessThan(Duration.ofSeconds(2));
        assertThatThrownBy(() -> io.cerberus.spi.AcquireResult.granted(1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ageNanos must not be negative");
    }

    @Test
    void renewalsComeWithinAThirdOfTheValidity() throws Exception {
        Duration lease = Duration.ofMillis(900);
        Cerberus cerberus = client(lease);
        Scripted engine = ScriptedEngineProvider.last;
        engine.validity = Duration.ofMillis(300);
        DistributedLock lock = cerberus.lock("renewed-early");
        lock.lock();
        long until = System.nanoTime() + lease.multipliedBy(2).toNanos();
        while (System.nanoTime() < until) {
            assertThat(lock.lease().isValid())
                    .as("renewed before its validity ends")
                    .isTrue();
            TimeUnit.MILLISECONDS.sleep(20); // sampling the state, not synchronising with it
        }
        // every 100ms: about 18; every lease/3 (300ms) would make about 7
        assertThat(engine.renewCalls.get())
                .as("renewals in two leases of 900ms with a validity of 300ms")
                .isGreaterThanOrEqualTo(10);
        lock.unlock();
    }

    @Test
    void invalidValidityIsRefusedNamingTheEngine() {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        Scripted engine = ScriptedEngineProvider.last;
        engine.validity = Duration.ofSeconds(31);
        assertThatThrownBy(() -> cerberus.lock("too-long").lock())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("validity")
                .hasMessageContaining("at most the lease");
    }

    @Test
    void missingFencingTokenSaysWhyTheEngineHasNone() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        Scripted engine = ScriptedEngineProvider.last;
        engine.whyNoFencing = "its nodes share no counter";
        try (Lease lease = cerberus.lock("unfenced").acquire(Duration.ZERO)) {
            assertThatThrownBy(lease::fencingToken)
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("gives no fencing tokens: its nodes share no counter")
                    .hasMessageContaining("engines with fencing tokens");
        }
    }

    private static long bound(long millis) {
        return (long) (millis * SCALE);
    }

    private static void pollUntil(String what, Duration within, BooleanSupplier condition) {
        Await.until(what, within, condition);
    }
}
