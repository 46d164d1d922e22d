package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The lock calls that take a lease of the caller's: the lock is held for that lease and not renewed, so another
 * client takes it once the lease is over.
 */
class ExplicitLeaseCallsTest {
    private static final Duration LEASE = Duration.ofMillis(300);

    private final String store = "mem:explicit-" + UUID.randomUUID();

    @Test
    void tryLockWithAWaitAndALeaseHoldsForThatLeaseOnly() throws Exception {
        try (Cerberus mine = Cerberus.connect(store);
                Cerberus theirs = Cerberus.connect(store)) {
            DistributedLock lock = mine.lock("explicit");
            assertThat(lock.tryLock(1000, LEASE.toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(lock.lease().leaseTime()).isEqualTo(LEASE);
            assertTakenByOtherAfterTheLease(lock.lease(), theirs.lock("explicit"));
        }
    }

    @Test
    void acquireAsyncWithALeaseHoldsForThatLeaseOnly() throws Exception {
        try (Cerberus mine = Cerberus.connect(store);
                Cerberus theirs = Cerberus.connect(store)) {
            Lease lease = mine.lock("explicit-async")
                    .acquireAsync(Duration.ofSeconds(1), LEASE)
                    .get(5, TimeUnit.SECONDS);
            assertThat(lease.leaseTime()).isEqualTo(LEASE);
            assertTakenByOtherAfterTheLease(lease, theirs.lock("explicit-async"));
        }
    }

    private static void assertTakenByOtherAfterTheLease(Lease lease, DistributedLock other) throws Exception {
        assertThat(other.tryLock()).as("held while the lease lasts").isFalse();
        assertThat(other.tryLock(5, TimeUnit.SECONDS))
                .as("free once the lease is over: it was not renewed")
                .isTrue();
        assertThat(lease.isValid()).isFalse();
        other.unlock();
    }
}
