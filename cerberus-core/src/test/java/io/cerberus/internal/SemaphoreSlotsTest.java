package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedSemaphore;
import io.cerberus.Permits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The slot names of semaphores, and the ids of their handles. */
class SemaphoreSlotsTest {

    @Test
    void aSlotNameIsNoLockNameAndFitsTheLockNameLengthEvenForTheLongestSemaphoreName() {
        String slot = SemaphoreView.slotName("partner-api", 2);
        assertThatThrownBy(() -> Checks.lockName(slot)).isInstanceOf(IllegalArgumentException.class);
        assertThat(SemaphoreView.describe(slot)).isEqualTo("permit 2 of semaphore 'partner-api'");

        String longest = "n".repeat(Checks.MAX_LOCK_NAME);
        String hashed = SemaphoreView.slotName(longest, 999);
        assertThat(hashed.length()).isLessThanOrEqualTo(Checks.MAX_LOCK_NAME);
        assertThat(hashed).isNotEqualTo(SemaphoreView.slotName(longest.substring(1) + "m", 999));
        assertThat(SemaphoreView.describe(hashed)).startsWith("permit 999 of semaphore whose name has the SHA-256 ");
        assertThat(SemaphoreView.describe("order:42")).isEqualTo("lock 'order:42'");
        assertThat(SemaphoreView.describe("a#1")).isEqualTo("lock 'a#1'");
    }

    @Test
    void semaphoresOfNamesThatDifferOnlyAfterTheHashStayApart() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:slots-apart")) {
            DistributedSemaphore a = cerberus.semaphore("x#1", 1);
            DistributedSemaphore b = cerberus.semaphore("x", 2);
            try (Permits one = a.acquire(1, Duration.ZERO)) {
                assertThat(one.count()).isEqualTo(1);
                assertThat(b.availablePermits()).isEqualTo(2);
            }
        }
    }

    @Test
    void aClientKeepsNoNoteOfASemaphoreOnceEveryAcquisitionEnded() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:slots-notes")) {
            CerberusClient client = (CerberusClient) cerberus;
            DistributedSemaphore semaphore = cerberus.semaphore("notes", 2);
            Permits two = semaphore.acquire(2, Duration.ZERO);
            assertThat(client.semaphoresInUse()).isEqualTo(1);
            assertThat(semaphore.tryAcquire(1, Duration.ofMillis(50)))
                    .as("timed out")
                    .isEmpty();
            java.util.concurrent.CompletableFuture<Permits> cancelled =
                    semaphore.acquireAsync(1, Duration.ofSeconds(30));
            cancelled.cancel(false);
            two.close();
            semaphore.acquireAsync(1, Duration.ZERO).get().releaseAsync().get();
            try (Permits one = semaphore.acquire(1, Duration.ZERO)) {
                assertThat(one.count()).isEqualTo(1);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (client.semaphoresInUse() != 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the cancelled acquisition leaves on the async pool
            }
            assertThat(client.semaphoresInUse()).as("notes left").isZero();
        }
    }

    @Test
    void aClientKeepsItsNotesOfASemaphoreWhileAnyOfItsPermitsIsHeld() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:slots-kept")) {
            CerberusClient client = (CerberusClient) cerberus;
            DistributedSemaphore semaphore = cerberus.semaphore("kept", 3);
            Permits first = semaphore.acquire(1, Duration.ZERO);
            Permits second = semaphore.acquire(1, Duration.ZERO);
            first.close();
            assertThat(client.semaphoresInUse())
                    .as("one of its permits is still held")
                    .isEqualTo(1);
            second.close();
            assertThat(client.semaphoresInUse()).isZero();
        }
    }

    @Test
    void anIdIsSlotTokenPairsAndAnythingElseIsRefused() {
        assertThat(PermitsHold.parseId("2:1734,5:1735")).hasSize(2);
        assertThat(PermitsHold.parseId("0:0,999:7"))
                .as("the first and the last slot, a token of 0")
                .containsExactly(new long[] {0, 0}, new long[] {999, 7});
        for (String bad : new String[] {"", "2", "2:", ":5", "2:x", "1000:5", "-1:5", "2:-5", "2:5,", "2:5;3:6"}) {
            assertThatThrownBy(() -> PermitsHold.parseId(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("permits id");
        }
        assertThatThrownBy(() -> PermitsHold.parseId(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCountOutOfRangeIsRefusedNamingTheRule() {
        assertThatThrownBy(() -> SemaphoreView.checkPermits(1001))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("permits must be 1 to 1000, was 1001");
        assertThat(SemaphoreView.checkPermits(1000)).isEqualTo(1000);
    }
}
