package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What locks, semaphores, multi-locks and their holds say of themselves: in messages, logs and a debugger. */
class ViewsDescribeThemselvesTest {
    private final String store = "described-" + UUID.randomUUID();

    @Test
    void locksSayTheirModeAndName() {
        try (Cerberus cerberus = Cerberus.connect("mem:" + store)) {
            assertThat(cerberus.lock("ledger")).hasToString("exclusive lock 'ledger'");
            assertThat(cerberus.readWriteLock("doc").readLock()).hasToString("read lock 'doc'");
            assertThat(cerberus.readWriteLock("doc").writeLock()).hasToString("write lock 'doc'");
        }
    }

    @Test
    void aSemaphoreAndItsPermitsSayWhatTheyAreAndWhetherTheyStillHold() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("mem:" + store)
                .defaultLease(Duration.ofSeconds(20))
                .build()) {
            DistributedSemaphore pool = cerberus.semaphore("pool", 3);
            assertThat(pool).hasToString("semaphore 'pool' (3 permits)");

            Permits two = pool.acquire(2, Duration.ZERO);
            assertThat(two.toString()).matches("permits \\[\\d, \\d\\] of semaphore 'pool'");
            assertThat(two.engineName()).isEqualTo(cerberus.currentEngine());
            assertThat(two.leaseTime()).isEqualTo(Duration.ofSeconds(20));
            two.close();
            assertThat(two.toString()).endsWith("of semaphore 'pool' (not valid)");
        }
    }

    @Test
    void aMultiLockAndItsHoldNameTheirMembers() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:" + store)) {
            MultiLock transfer = cerberus.multiLock("account-1", "account-2");
            assertThat(transfer).hasToString("multi-lock [account-1, account-2]");

            MultiLease held = transfer.acquire(Duration.ZERO);
            assertThat(held).hasToString("multi-lock hold [account-1, account-2]");
            assertThat(held.lease("account-2").lockName()).isEqualTo("account-2");
            assertThatThrownBy(() -> held.lease("account-3"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "'account-3' is not a member of this multi-lock; its members are [account-1, account-2]");
            held.close();
            assertThat(held).hasToString("multi-lock hold [account-1, account-2] (not valid)");
        }
    }
}
