package io.cerberus.check.judge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.check.log.CheckLocks;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import io.cerberus.check.run.CheckWorkerCommand;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link PermitsJudge} on hand-written logs of a semaphore of 2 permits ({@code s#0}, {@code s#1}, units 0 and 1): each
 * slot judged as a lock, and over the slots the writers the registers accepted at once against the permits.
 */
class PermitsJudgeTest {
    private static final CheckLocks TWO_PERMITS = new CheckLocks("s", Path.of("register"), 1, 2);

    private static HoldLog.Event e(String kind, String client, int unit, long token, long nanos, String detail) {
        return new HoldLog.Event(kind, client, unit, token, nanos, detail);
    }

    /** @return the lines of one hold of a slot: granted, read, written, released */
    private static List<HoldLog.Event> hold(
            String client, int unit, long token, long granted, long read, long written, String write, long released) {
        return List.of(
                e("ACQ", client, unit, token, granted, ""),
                e("READ", client, unit, token, read, "0"),
                e("WRITE", client, unit, token, written, write),
                e("REL", client, unit, token, released, ""));
    }

    private static PermitsJudgement judge(List<Register.State> registers, long end, List<List<HoldLog.Event>> holds) {
        return judge(registers, end, Stuck.NEVER, holds);
    }

    private static PermitsJudgement judge(
            List<Register.State> registers, long end, Stuck stuck, List<List<HoldLog.Event>> lines) {
        List<HoldLog.Event> events = new ArrayList<>();
        lines.forEach(events::addAll);
        events.sort(java.util.Comparator.comparingLong(HoldLog.Event::nanos));
        return new PermitsJudge(registers, TWO_PERMITS, 0, end, stuck).judge(events);
    }

    @Test
    void twoHoldersOfTwoSlotsAtOnceAreSafeAndAThirdWaitsForAFreedSlot() {
        PermitsJudgement report = judge(
                List.of(new Register.State(2, 2), new Register.State(1, 1)),
                100,
                List.of(
                        hold("c1", 0, 1, 10, 12, 20, "ok", 22),
                        hold("c2", 1, 1, 11, 13, 21, "ok", 23),
                        List.of(e("ENGINE", "c3", 0, -1, 15, CheckWorkerCommand.BUSY)),
                        hold("c3", 0, 2, 24, 25, 30, "ok", 31)));

        assertThat(report.verdict()).isEqualTo("SAFE");
        assertThat(report.mostWriters()).isEqualTo(2);
        assertThat(report.mostHolders()).isEqualTo(2);
        assertThat(report.slots().locks()).extracting(LockReport::name).containsExactly("s#0", "s#1");
        assertThat(report.text("title"))
                .contains("most writers at once:  2 of 2 permits")
                .contains("slots:                 2, each judged on its own")
                .contains("(two clients believed they held the same slot at once)");
    }

    @Test
    void aHolderPausedPastItsLeaseIsAThirdHolderButItsLateWriteIsRefused() {
        // c1 holds s#0 and reads; paused, it loses the slot to c3; c2 holds s#1 meanwhile; c1 wakes, its write is stale
        PermitsJudgement report = judge(
                List.of(new Register.State(1, 1), new Register.State(1, 1)),
                100,
                List.of(
                        List.of(
                                e("ACQ", "c1", 0, 1, 10, ""),
                                e("READ", "c1", 0, 1, 11, "0"),
                                e("FAULT", "c1", -1, -1, 12, "pause"),
                                e("FAULT", "c1", -1, -1, 60, "resume"),
                                e("WRITE", "c1", 0, 1, 61, "stale"),
                                e("REL", "c1", 0, 1, 62, ""),
                                e("LOST", "c1", 0, 1, 63, "at release")),
                        hold("c3", 0, 2, 40, 41, 45, "ok", 46),
                        hold("c2", 1, 7, 39, 42, 47, "ok", 48)));

        assertThat(report.verdict()).isEqualTo("SAFE_WITH_FENCING");
        assertThat(report.mostHolders()).as("c1 still believed it held s#0").isEqualTo(3);
        assertThat(report.mostWriters()).isEqualTo(2);
        assertThat(report.slots().staleStopped()).isEqualTo(1);
        assertThat(report.slots().overlaps()).hasSize(1);
    }

    @Test
    void moreWritersAcceptedAtOnceThanPermitsIsUnsafe() {
        // c1's late write was accepted (the permit ignored): three critical sections at once on two permits
        PermitsJudgement report = judge(
                List.of(new Register.State(1, 1), new Register.State(1, 1)),
                100,
                List.of(
                        hold("c1", 0, 1, 10, 11, 61, "ok", 62),
                        hold("c3", 0, 2, 40, 41, 45, "ok", 46),
                        hold("c2", 1, 7, 39, 42, 47, "ok", 48)));

        assertThat(report.verdict()).isEqualTo("UNSAFE");
        assertThat(report.mostWriters()).isEqualTo(3);
        assertThat(report.text("title"))
                .contains("most writers at once:  3 of 2 permits")
                .contains("more writers than permits at 0.0 ms: ")
                .contains("c1 s#0 token 1")
                .contains("c2 s#1 token 7");
    }

    @Test
    void aWriterIsFromItsReadToItsWriteSoSectionsThatOnlyTouchAreNotAtOnce() {
        // three holds overlap as believed, but c1 wrote (sent at 20) before c3 read (at 20): never three writers
        PermitsJudgement report = judge(
                List.of(new Register.State(2, 2), new Register.State(1, 1)),
                100,
                List.of(
                        hold("c1", 0, 1, 10, 11, 20, "ok", 40),
                        hold("c3", 0, 2, 19, 20, 30, "ok", 31),
                        hold("c2", 1, 7, 12, 13, 35, "ok", 36)));

        assertThat(report.mostWriters()).isEqualTo(2);
        assertThat(report.mostHolders()).isEqualTo(3);
        assertThat(report.verdict()).isEqualTo("SAFE_WITH_FENCING");
    }

    @Test
    void tokensAreComparedPerSlotOnly() {
        PermitsJudgement perSlot = judge(
                List.of(new Register.State(1, 1), new Register.State(1, 1)),
                100,
                List.of(hold("c1", 0, 9, 10, 11, 12, "ok", 13), hold("c2", 1, 3, 20, 21, 22, "ok", 23)));
        assertThat(perSlot.verdict()).as("slot 1's token 3 after slot 0's 9").isEqualTo("SAFE");

        PermitsJudgement backwards = judge(
                List.of(new Register.State(2, 2), new Register.State(0, 0)),
                100,
                List.of(hold("c1", 0, 9, 10, 11, 12, "ok", 13), hold("c2", 0, 3, 20, 21, 22, "ok", 23)));
        assertThat(backwards.verdict()).isEqualTo("UNSAFE");
        assertThat(backwards.slots().tokensBackwards()).isEqualTo(1);
    }

    @Test
    void aSlotsRegisterThatLostAnUpdateIsUnsafe() {
        PermitsJudgement report = judge(
                List.of(new Register.State(1, 2), new Register.State(0, 0)),
                100,
                List.of(hold("c1", 0, 1, 10, 11, 12, "ok", 13), hold("c2", 0, 2, 20, 21, 22, "ok", 23)));

        assertThat(report.verdict()).isEqualTo("UNSAFE");
        assertThat(report.slots().lostUpdates()).isEqualTo(1);
    }

    @Test
    void aSemaphoreIsStuckOnlyWhenNoSlotOfItIsGrantedWhileAskedFor() {
        Stuck tenAtTheEnd = new Stuck(100, 10, 5);
        List<Register.State> registers = List.of(new Register.State(1, 1), new Register.State(1, 1));
        PermitsJudgement otherSlot = judge(
                registers,
                110,
                tenAtTheEnd,
                List.of(
                        hold("c1", 0, 1, 10, 11, 12, "ok", 13),
                        hold("c2", 1, 1, 92, 93, 94, "ok", 95),
                        List.of(e("ENGINE", "c3", 0, -1, 96, CheckWorkerCommand.BUSY))));
        assertThat(otherSlot.verdict()).as("s#1 was granted in the last ten").isEqualTo("SAFE");

        PermitsJudgement stuck = judge(
                registers,
                110,
                tenAtTheEnd,
                List.of(
                        hold("c1", 0, 1, 10, 11, 12, "ok", 13),
                        hold("c2", 1, 1, 20, 21, 22, "ok", 23),
                        List.of(e("ENGINE", "c3", 0, -1, 96, CheckWorkerCommand.BUSY))));
        assertThat(stuck.verdict()).isEqualTo("STUCK");
        assertThat(stuck.text("title")).contains("stuck:                 s: asked for, and no permit granted");
    }

    @Test
    void aRunWithoutAHoldIsNoProgress() {
        PermitsJudgement report = judge(
                List.of(Register.State.EMPTY, Register.State.EMPTY),
                100,
                List.of(List.of(e("ENGINE", "c1", 0, -1, 10, CheckWorkerCommand.BUSY))));

        assertThat(report.verdict()).isEqualTo("NO_PROGRESS");
    }

    @Test
    void theJudgeNeedsARegisterPerSlot() {
        assertThatThrownBy(() -> new PermitsJudge(List.of(Register.State.EMPTY), TWO_PERMITS, 0, 1, Stuck.NEVER))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a register per slot");
    }

    @Test
    void aSemaphoresSlotsAreUnitsWithRegistersKeyedByTheirFenceNames() {
        CheckLocks three = new CheckLocks("api", Path.of("out/register"), 2, 3);
        assertThat(three.units()).isEqualTo(6);
        assertThat(three.unit(1, 2)).isEqualTo(5);
        assertThat(three.lockOf(5)).isEqualTo(1);
        assertThat(three.unitName(5)).isEqualTo("api-1#2");
        assertThat(three.register(5)).isEqualTo(Path.of("out/register-api-1#2"));
        assertThat(new CheckLocks("api", Path.of("register"), 1, 2).registerNames())
                .containsExactly("register-api#0", "register-api#1");
        assertThat(new CheckLocks("api", Path.of("register"), 3).registerNames())
                .as("locks keep their names")
                .containsExactly("register-0", "register-1", "register-2");
    }
}
