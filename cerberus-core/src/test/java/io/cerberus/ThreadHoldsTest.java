package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Holds bound to a thread at their edges: a read lock taken inside the thread's write lock, and re-entering or
 * unlocking inside a hold that was lost meanwhile (told at once, never counted as held), and a client's close.
 */
class ThreadHoldsTest {
    private final String store = "holds-" + UUID.randomUUID();

    @Test
    void closingTheClientEndsTheHoldsOfItsThreads() throws Exception {
        Cerberus cerberus = Cerberus.connect("mem:" + store);
        DistributedLock lock = cerberus.lock("closed-over");
        DistributedLock read = cerberus.readWriteLock("document").readLock();
        lock.lock();
        read.lock();
        cerberus.close();
        assertThat(lock.isHeldByCurrentThread()).as("released by the close").isFalse();
        assertThat(read.isHeldByCurrentThread()).isFalse();
        try (Cerberus other = Cerberus.connect("mem:" + store)) {
            assertThat(other.lock("closed-over").tryLock())
                    .as("free for others")
                    .isTrue();
        }
    }

    @Test
    void aReadLockInsideTheThreadsWriteLockIsHeldUntilItsOwnUnlockAndOneNotTakenCannotBeUnlocked() {
        try (Cerberus cerberus = Cerberus.connect("mem:" + store)) {
            DistributedReadWriteLock document = cerberus.readWriteLock("document");
            DistributedLock write = document.writeLock();
            DistributedLock read = document.readLock();
            write.lock();
            assertThat(read.isHeldByCurrentThread())
                    .as("the write lock alone is no read lock held")
                    .isFalse();
            assertThatThrownBy(read::unlock)
                    .as("a read lock never taken inside the write lock")
                    .isInstanceOf(IllegalMonitorStateException.class)
                    .hasMessageContaining("does not hold read");
            read.lock();
            assertThat(read.isHeldByCurrentThread()).isTrue();
            assertThat(read.lease().fencingToken())
                    .as("the nested read lock is the write lock's hold")
                    .isEqualTo(write.lease().fencingToken());
            read.unlock();
            assertThat(read.isHeldByCurrentThread()).isFalse();
            assertThatThrownBy(read::unlock).isInstanceOf(IllegalMonitorStateException.class);
            assertThat(write.isHeldByCurrentThread()).isTrue();
            write.unlock();
            assertThat(cerberus.lock("document").isLocked()).isFalse();
        }
    }

    @Test
    void reEnteringOrUnlockingInsideAHoldLostMeanwhileThrowsTheLoss() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + store)
                .defaultLease(Duration.ofMillis(300))
                .build()) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.last;
            DistributedLock reentered = cerberus.lock("reentered");
            DistributedLock nested = cerberus.lock("nested");
            DistributedReadWriteLock document = cerberus.readWriteLock("document");
            reentered.lock();
            nested.lock();
            nested.lock();
            document.writeLock().lock();
            engine.renewals = ScriptedEngineProvider.RenewalMode.REFUSE;
            Await.until(
                    "every hold lost",
                    Duration.ofSeconds(10),
                    () -> !reentered.lease().isValid()
                            && !nested.lease().isValid()
                            && !document.writeLock().lease().isValid());

            assertThatThrownBy(reentered::lock)
                    .as("re-entering a lost hold")
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'reentered'");
            assertThatThrownBy(nested::unlock)
                    .as("the inner unlock of a lost hold")
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'nested'");
            assertThatThrownBy(() -> document.readLock().lock())
                    .as("a read lock inside a lost write lock")
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'document'");
        }
    }

    @Test
    void unlockingAHoldTheEngineNoLongerHasThrowsTheLossForAReadAndAnExclusiveLock() {
        try (Cerberus holder = Cerberus.connect("mem:" + store);
                Cerberus operator = Cerberus.connect("mem:" + store)) {
            for (DistributedLock lock : List.of(holder.readWriteLock("report").readLock(), holder.lock("ledger"))) {
                lock.lock();
                LockInfo hold = operator.inspect(lock.name()).get(0);
                assertThat(operator.forceRelease(lock.name(), hold.fencingToken()))
                        .isTrue();

                assertThatThrownBy(lock::unlock)
                        .as("the engine no longer had the hold at its release")
                        .isInstanceOf(LockLostException.class)
                        .hasMessageContaining("'" + lock.name() + "'");
                assertThat(lock.isHeldByCurrentThread()).isFalse();
            }
        }
    }
}
