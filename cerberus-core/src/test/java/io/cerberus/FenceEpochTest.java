package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fences across engine switches: each switch raises the new engine's epoch above every epoch the client has seen,
 * so the fences of holds granted after a failover, and after a fail-back, are ordered after every fence before.
 */
class FenceEpochTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final String a = "mem:epochs-a-" + UUID.randomUUID();
    private final String b = "mem:epochs-b-" + UUID.randomUUID();

    @TempDir
    Path dir;

    private Cerberus twoEngines() {
        return Cerberus.builder()
                .engine("a", a)
                .engine("b", b)
                .lockDelay(Duration.ofMillis(1))
                .build();
    }

    private static Fence fenceOfOneHold(Cerberus cerberus) throws InterruptedException {
        try (Lease lease = cerberus.lock("orders").acquire(WAIT)) {
            Fence fence = lease.fence();
            assertThat(Fence.of(lease)).as("read once, then the same").isSameAs(fence);
            assertThat(fence.token()).isEqualTo(lease.fencingToken());
            return fence;
        }
    }

    @Test
    void aClientThatNeverSwitchedHasEpochZero() throws Exception {
        try (Cerberus cerberus = Cerberus.builder().engine(a).build()) {
            assertThat(fenceOfOneHold(cerberus).epoch()).isZero();
            assertThat(fenceOfOneHold(cerberus).epoch()).isZero();
        }
    }

    @Test
    void aFailoverAndAFailBackEachGiveFencesAfterEveryFenceBefore() throws Exception {
        try (Cerberus cerberus = twoEngines()) {
            Fence onA = fenceOfOneHold(cerberus);
            cerberus.switchEngine("b");
            Fence onB = fenceOfOneHold(cerberus);
            Fence onBAgain = fenceOfOneHold(cerberus);
            cerberus.switchEngine("a");
            Fence backOnA = fenceOfOneHold(cerberus);

            assertThat(onA).isEqualTo(new Fence(0, onA.token()));
            assertThat(onB.epoch()).isEqualTo(1);
            assertThat(onBAgain).as("the same epoch, a larger token").isEqualTo(new Fence(1, onBAgain.token()));
            assertThat(onBAgain.token()).isGreaterThan(onB.token());
            assertThat(backOnA.epoch())
                    .as("above B's, though A's tokens went on from where they were")
                    .isEqualTo(2);
            assertThat(onA.isOlderThan(onB)).isTrue();
            assertThat(onBAgain.isOlderThan(backOnA)).isTrue();
        }
    }

    @Test
    void clientsThatSwitchLaterJoinTheEpochAlreadyRaisedAndATokenOrdersTheirHolds() throws Exception {
        try (Cerberus first = twoEngines();
                Cerberus second = twoEngines()) {
            Fence before = fenceOfOneHold(second);
            first.switchEngine("b");
            Fence ofFirst = fenceOfOneHold(first);
            second.switchEngine("b");
            Fence ofSecond = fenceOfOneHold(second);

            assertThat(ofFirst.epoch()).isEqualTo(1);
            assertThat(ofSecond.epoch())
                    .as("raised to at least 1: it was 1 already")
                    .isEqualTo(1);
            assertThat(before.isOlderThan(ofFirst)).isTrue();
            assertThat(ofFirst.isOlderThan(ofSecond)).isTrue();
        }
    }

    @Test
    void aLeadersTermHasAFenceOrderedAcrossASwitchAsALeasesIs() throws Exception {
        try (Cerberus cerberus = twoEngines()) {
            Fence first;
            try (Leadership leadership = cerberus.leadership("scheduler")) {
                leadership.start();
                assertThat(leadership.awaitLeadership(WAIT)).isTrue();
                first = leadership.fence();
                assertThat(first).isEqualTo(new Fence(0, leadership.term()));
            }
            cerberus.switchEngine("b");
            try (Leadership leadership = cerberus.leadership("scheduler")) {
                leadership.start();
                assertThat(leadership.awaitLeadership(WAIT)).isTrue();
                assertThat(leadership.fence().epoch()).isEqualTo(1);
                assertThat(first.isOlderThan(leadership.fence())).isTrue();
            }
        }
    }

    @Test
    void twoEnginesNeverShareAnEpochThoughAClientSwitchesKnowingLessThanAnother() throws Exception {
        try (Cerberus knowing = twoEngines();
                Cerberus unaware = twoEngines()) {
            unaware.switchEngine("b");
            fenceOfOneHold(unaware); // b at 1, seen by both
            knowing.switchEngine("b");
            fenceOfOneHold(knowing);
            unaware.switchEngine("a"); // owes a a raise, never sent: no hold there
            knowing.switchEngine("a");
            Fence backOnA = fenceOfOneHold(knowing); // a at 2
            unaware.switchEngine("b"); // it saw 1 only: b is raised to 3, never to 2
            Fence onB = fenceOfOneHold(unaware);

            assertThat(backOnA.epoch()).isEqualTo(2);
            assertThat(onB.epoch()).as("engine b's epochs are odd, a's even").isEqualTo(3);
        }
    }

    @Test
    void aHoldNoLongerHeldGetsNoFence() throws Exception {
        try (Cerberus cerberus = Cerberus.builder().engine(a).build()) {
            Lease lease = cerberus.lock("orders").acquire(WAIT);
            lease.close();
            assertThatThrownBy(lease::fence)
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'orders'")
                    .hasMessageContaining("no longer held when its epoch was read");
        }
    }

    @Test
    void theFileEngineKeepsItsEpochInAFileBesideTheLocksAcrossClients() throws Exception {
        String files = "file:" + dir;
        try (Cerberus cerberus = Cerberus.builder()
                .engine("mem", a)
                .engine("file", files)
                .lockDelay(Duration.ofMillis(1))
                .build()) {
            cerberus.switchEngine("file");
            assertThat(fenceOfOneHold(cerberus).epoch()).isEqualTo(1);
        }
        assertThat(Files.readString(dir.resolve("default.epoch"))).isEqualTo("1");
        try (Cerberus later = Cerberus.builder().engine(files).build()) {
            assertThat(fenceOfOneHold(later).epoch()).as("read from the file").isEqualTo(1);
        }
    }

    @Test
    void theLongFormKeepsTheOrderAndRefusesWhatDoesNotFit() {
        Fence fence = new Fence(3, 1_795_699_283_671_237L);
        assertThat(Fence.ofLong(fence.asLong())).isEqualTo(fence);
        assertThat(new Fence(1, 1_795_699_283_671_237L).asLong()).isLessThan(new Fence(2, 7200).asLong());
        assertThat(new Fence(0, 5).asLong()).isEqualTo(5);
        assertThatThrownBy(() -> new Fence(0, 1L << 52).asLong())
                .isInstanceOf(ArithmeticException.class)
                .hasMessageContaining("token of 2^52 or more");
        assertThatThrownBy(() -> new Fence(2048, 1).asLong())
                .isInstanceOf(ArithmeticException.class)
                .hasMessageContaining("epoch of 2048 or more");
        assertThatThrownBy(() -> Fence.ofLong(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
