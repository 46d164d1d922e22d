package io.cerberus.check.judge;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Fence;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import io.cerberus.check.run.CheckWorkerCommand;
import java.util.List;
import org.junit.jupiter.api.Test;

class MutualExclusionJudgeTest {

    private static HoldLog.Event e(String kind, String client, long token, long nanos, String detail) {
        return new HoldLog.Event(kind, client, token, nanos, detail);
    }

    /** @param stale the stale writes the events show (the judge counts them there) */
    private static Register.State register(long value, long accepted, long stale) {
        return new Register.State(value, accepted);
    }

    @Test
    void backToBackHoldsAreSafe() {
        LockJudgement report = MutualExclusionJudge.judge(
                List.of(
                        e("ACQ", "c1", 1, 10, ""),
                        e("WRITE", "c1", 1, 15, "ok"),
                        e("REL", "c1", 1, 20, ""),
                        e("ACQ", "c2", 2, 20, ""),
                        e("WRITE", "c2", 2, 25, "ok"),
                        e("REL", "c2", 2, 30, "")),
                register(2, 2, 0),
                0,
                40);

        assertThat(report.verdict()).isEqualTo("SAFE");
        assertThat(report.holds()).hasSize(2);
        assertThat(report.longestGapNanos()).isZero();
    }

    @Test
    void aRunInWhichNobodyHeldTheLockIsNoProgressNeverSafe() {
        LockJudgement report = MutualExclusionJudge.judge(
                List.of(e("FAULT", "c1", -1, 12, "pause"), e("FAULT", "c1", -1, 60, "resume")),
                register(0, 0, 0),
                0,
                70);

        assertThat(report.holds()).isEmpty();
        assertThat(report.verdict()).isEqualTo("NO_PROGRESS");
    }

    @Test
    void aPausedHolderOverlapsButFencingStopsItsWrite() {
        LockJudgement report = MutualExclusionJudge.judge(
                List.of(
                        e("ACQ", "c1", 1, 10, ""),
                        e("FAULT", "c1", -1, 12, "pause"),
                        e("ACQ", "c2", 2, 40, ""),
                        e("WRITE", "c2", 2, 45, "ok"),
                        e("REL", "c2", 2, 50, ""),
                        e("FAULT", "c1", -1, 60, "resume"),
                        e("WRITE", "c1", 1, 61, "stale"),
                        e("LOST", "c1", 1, 62, "")),
                register(1, 1, 1),
                0,
                70);

        assertThat(report.verdict()).isEqualTo("SAFE_WITH_FENCING");
        assertThat(report.overlaps()).hasSize(1);
        assertThat(report.staleStopped()).isEqualTo(1);
        assertThat(report.faultCounts()).containsEntry("pause", 1).containsEntry("resume", 1);
    }

    @Test
    void aLongTermIsOneHoldWhoseManyWritesAreCountedAndAPausedLeadersUnfencedWriteIsALostUpdate() {
        // c1 leads term 1 and writes four times; paused in its fifth act, it is deposed; c2's term 2 writes twice;
        // c1 wakes and writes the value it read before the pause: the register ignores tokens (the negative control)
        LockJudgement report = MutualExclusionJudge.judge(
                List.of(
                        e("ACQ", "c1", 1, 10, ""),
                        e("WRITE", "c1", 1, 11, "ok"),
                        e("WRITE", "c1", 1, 12, "ok"),
                        e("WRITE", "c1", 1, 13, "ok"),
                        e("WRITE", "c1", 1, 14, "ok"),
                        e("READ", "c1", 1, 15, "4"),
                        e("FAULT", "c1", -1, 16, "pause"),
                        e("ACQ", "c2", 2, 40, ""),
                        e("WRITE", "c2", 2, 41, "ok"),
                        e("WRITE", "c2", 2, 42, "ok"),
                        e("FAULT", "c1", -1, 60, "resume"),
                        e("WRITE", "c1", 1, 61, "ok"),
                        e("REL", "c1", 1, 62, ""),
                        e("REL", "c2", 2, 70, "")),
                register(5, 7, 0),
                0,
                80);

        assertThat(report.holds()).hasSize(2);
        assertThat(report.tokensBackwards()).as("one grant per term").isZero();
        assertThat(report.lostUpdates()).isEqualTo(2);
        assertThat(report.verdict()).isEqualTo("UNSAFE");
        assertThat(report.holds().get(0).writeText()).isEqualTo("5 ok");
        assertThat(report.text("run")).contains("write 5 ok]").doesNotContain("ok,ok,ok,ok");
    }

    @Test
    void lostUpdatesAndTokensGoingBackwardsAreUnsafe() {
        LockJudgement lost = MutualExclusionJudge.judge(
                List.of(e("ACQ", "c1", 1, 10, ""), e("REL", "c1", 1, 20, "")), register(1, 2, 0), 0, 30);
        LockJudgement backwards = MutualExclusionJudge.judge(
                List.of(
                        e("ACQ", "c1", 5, 10, ""),
                        e("REL", "c1", 5, 20, ""),
                        e("ACQ", "c2", 4, 30, ""),
                        e("REL", "c2", 4, 40, "")),
                register(2, 2, 0),
                0,
                50);

        assertThat(lost.lostUpdates()).isEqualTo(1);
        assertThat(lost.verdict()).isEqualTo("UNSAFE");
        assertThat(backwards.tokensBackwards()).isEqualTo(1);
        assertThat(backwards.verdict()).isEqualTo("UNSAFE");
    }

    @Test
    void afterASwitchAGrantWithAnOlderFenceOnTheEngineItsClientHadNotLeftIsLateUnlessAWriteUnderItWasAccepted() {
        long epochOne = new Fence(1, 7).asLong(); // after the failover: a small token in a larger epoch
        long epochZero = new Fence(0, 900).asLong();
        List<HoldLog.Event> events = List.of(
                e("FAULT", "clients", -1, 10, "switch to second"),
                e("ACQ", "c1", epochOne, 20, ""),
                e("WRITE", "c1", epochOne, 25, "ok"),
                e("REL", "c1", epochOne, 30, ""),
                e("ACQ", "c2", epochZero, 40, ""), // c2 had not switched yet: the first engine's larger token
                e("WRITE", "c2", epochZero, 45, "stale"),
                e("REL", "c2", epochZero, 50, ""));
        LockJudgement late = MutualExclusionJudge.judge(events, register(1, 1, 1), 0, 60);
        assertThat(late.tokensBackwards()).isZero();
        assertThat(late.lateGrants()).isEqualTo(1);
        assertThat(late.verdict()).isEqualTo("SAFE");

        List<HoldLog.Event> accepted = new java.util.ArrayList<>(events);
        accepted.set(5, e("WRITE", "c2", epochZero, 45, "ok"));
        assertThat(MutualExclusionJudge.judge(accepted, register(2, 2, 0), 0, 60)
                        .tokensBackwards())
                .as("the resource took a write under the older fence")
                .isEqualTo(1);

        List<HoldLog.Event> noSwitch =
                events.stream().filter(event -> !event.kind().equals("FAULT")).toList();
        assertThat(MutualExclusionJudge.judge(noSwitch, register(1, 1, 1), 0, 60)
                        .tokensBackwards())
                .as("no switch: the counter went backwards")
                .isEqualTo(1);

        List<HoldLog.Event> sameEpoch = new java.util.ArrayList<>(events);
        sameEpoch.set(4, e("ACQ", "c2", new Fence(1, 6).asLong(), 40, ""));
        sameEpoch.set(5, e("WRITE", "c2", new Fence(1, 6).asLong(), 45, "stale"));
        sameEpoch.set(6, e("REL", "c2", new Fence(1, 6).asLong(), 50, ""));
        assertThat(MutualExclusionJudge.judge(sameEpoch, register(1, 1, 1), 0, 60)
                        .tokensBackwards())
                .as("after a switch, the same epoch with a lower token: the counter went backwards")
                .isEqualTo(1);
    }

    @Test
    void aGrantThatReachesAClientPausedDuringItsAcquireIsLateNotBackwardsWhenFencingStoppedIt() {
        // c1 asked at 10 (its acquire took 50 ms of nanos here: 10..60), was paused at 12 and resumed at 55;
        // meanwhile c2 was granted 6 and wrote; c1's grant of 5 reached it late, and its write was refused
        List<HoldLog.Event> events = List.of(
                e("FAULT", "c1", -1, 12, "pause"),
                e("ENGINE", "c2", 6, 20, "acquire 0ms"),
                e("ACQ", "c2", 6, 20, ""),
                e("WRITE", "c2", 6, 25, "ok"),
                e("REL", "c2", 6, 30, ""),
                e("FAULT", "c1", -1, 55, "resume"),
                e("ENGINE", "c1", 5, 60_000_010, "acquire 60ms"),
                e("ACQ", "c1", 5, 60_000_010, ""),
                e("WRITE", "c1", 5, 60_000_020, "stale"),
                e("LOST", "c1", 5, 60_000_030, ""));
        LockJudgement late = MutualExclusionJudge.judge(events, register(1, 1, 1), 0, 60_000_040);

        assertThat(late.tokensBackwards()).isZero();
        assertThat(late.lateGrants()).isEqualTo(1);
        assertThat(late.verdict()).isNotEqualTo("UNSAFE");

        List<HoldLog.Event> accepted = new java.util.ArrayList<>(events);
        accepted.set(8, e("WRITE", "c1", 5, 60_000_020, "ok"));
        LockJudgement written = MutualExclusionJudge.judge(accepted, register(2, 2, 0), 0, 60_000_040);
        assertThat(written.tokensBackwards())
                .as("a write under the lower token was accepted")
                .isEqualTo(1);
        assertThat(written.verdict()).isEqualTo("UNSAFE");

        List<HoldLog.Event> unpaused =
                events.stream().filter(event -> !event.kind().equals("FAULT")).toList();
        LockJudgement backwards = MutualExclusionJudge.judge(unpaused, register(1, 1, 1), 0, 60_000_040);
        assertThat(backwards.tokensBackwards())
                .as("no pause during its acquire: the counter went backwards")
                .isEqualTo(1);
        assertThat(backwards.verdict()).isEqualTo("UNSAFE");
    }

    @Test
    void aGrantLoggedOnlyAfterItsClientsPauseIsJudgedInTheOrderItWasMade() {
        // c1 timed its acquire of 5 (200 ms) just before it was paused at 1 s, and wrote its lines once resumed at 3.2
        // s:
        // its acquire would have started at 2.99 s, when it was stopped. c2 was granted 6 at 3 s, during the pause, and
        // had
        // not written yet when c1 did, so c1's write was accepted. 5 was made before 6: no token went backwards.
        long second = 1_000_000_000L;
        List<HoldLog.Event> events = List.of(
                e("FAULT", "c1", -1, second, "pause"),
                e("ENGINE", "c2", 6, 3 * second, "acquire 0ms"),
                e("ACQ", "c2", 6, 3 * second, ""),
                e("ENGINE", "c1", 5, 3_190_000_000L, "acquire 200ms"),
                e("ACQ", "c1", 5, 3_190_000_000L, ""),
                e("FAULT", "c1", -1, 3_200_000_000L, "resume"),
                e("WRITE", "c1", 5, 3_250_000_000L, "ok"),
                e("REL", "c1", 5, 3_260_000_000L, ""),
                e("WRITE", "c2", 6, 5 * second, "ok"),
                e("REL", "c2", 6, 5 * second + 10, ""));
        LockJudgement report = MutualExclusionJudge.judge(events, register(2, 2, 0), 0, 6 * second);

        assertThat(report.tokensBackwards()).isZero();
        assertThat(report.lateGrants()).isZero();
        assertThat(report.verdict()).isNotEqualTo("UNSAFE");

        // the control: 6 was granted before the pause began, so 5, made later, went backwards
        List<HoldLog.Event> before = new java.util.ArrayList<>(events);
        before.set(1, e("ENGINE", "c2", 6, second / 2, "acquire 0ms"));
        before.set(2, e("ACQ", "c2", 6, second / 2, ""));
        before.sort(java.util.Comparator.comparingLong(HoldLog.Event::nanos));
        LockJudgement backwards = MutualExclusionJudge.judge(before, register(2, 2, 0), 0, 6 * second);
        assertThat(backwards.tokensBackwards()).isEqualTo(1);
        assertThat(backwards.verdict()).isEqualTo("UNSAFE");

        // c1 logged its acquire line at 0.99 s, before the pause, and its grant line only after: in hand at 0.99 s
        List<HoldLog.Event> split = new java.util.ArrayList<>(events);
        split.set(3, e("ENGINE", "c1", 5, 990_000_000L, "acquire 200ms"));
        split.sort(java.util.Comparator.comparingLong(HoldLog.Event::nanos));
        assertThat(MutualExclusionJudge.judge(split, register(2, 2, 0), 0, 6 * second)
                        .tokensBackwards())
                .isZero();
    }

    @Test
    void aKilledHolderHoldsUntilItDiesAndRecoveryIsMeasuredToTheNextGrant() {
        LockJudgement report = MutualExclusionJudge.judge(
                List.of(
                        e("ACQ", "c1", 1, 10, ""),
                        e("FAULT", "c1", -1, 20, "kill"),
                        e("ACQ", "c2", 2, 520, ""),
                        e("REL", "c2", 2, 530, "")),
                register(1, 1, 0),
                0,
                600);

        assertThat(report.holds()).first().satisfies(hold -> {
            assertThat(hold.end()).isEqualTo("killed");
            assertThat(hold.endNanos()).isEqualTo(20);
        });
        assertThat(report.recoveriesNanos()).containsExactly(500L);
        assertThat(report.longestGapNanos()).isEqualTo(500);
        assertThat(report.verdict()).isEqualTo("SAFE");
    }

    @Test
    void aRepeatedFencingTokenCountsAsGoingBackwards() {
        LockJudgement repeated = MutualExclusionJudge.judge(
                List.of(
                        e("ACQ", "c1", 7, 10, ""),
                        e("REL", "c1", 7, 20, ""),
                        e("ACQ", "c2", 7, 30, ""),
                        e("REL", "c2", 7, 40, "")),
                register(2, 2, 0),
                0,
                50);

        assertThat(repeated.tokensBackwards())
                .as("a token must be larger than every earlier one")
                .isEqualTo(1);
        assertThat(repeated.verdict()).isEqualTo("UNSAFE");
    }

    @Test
    void confirmationsAreCountedPerFaultAndApartFromTheFaults() {
        LockJudgement report = MutualExclusionJudge.judge(
                List.of(
                        e("FAULT", "c1", -1, 10, "drop"),
                        e("FAULT", "c1", -1, 20, "heal"),
                        e("FAULT", "c1", -1, 25, "confirmed drop: {lease lost=1}"),
                        e("FAULT", "c2", -1, 30, "drop"),
                        e("FAULT", "c2", -1, 40, "heal"),
                        e("FAULT", "c2", -1, 45, "unconfirmed drop: no error"),
                        e("FAULT", "server", -1, 50, "failover: SIGKILL to the primary, node1"),
                        e("FAULT", "server", -1, 60, "confirmed failover: node2 promoted")),
                register(0, 0, 0),
                0,
                70);

        assertThat(report.faultCounts())
                .containsOnly(
                        java.util.Map.entry("drop", 2),
                        java.util.Map.entry("heal", 2),
                        java.util.Map.entry("failover", 1));
        assertThat(report.confirmations(true))
                .containsOnly(java.util.Map.entry("drop", 1), java.util.Map.entry("failover", 1));
        assertThat(report.confirmations(false)).containsOnly(java.util.Map.entry("drop", 1));
    }

    private static HoldLog.Event on(int lock, String kind, String client, long token, long nanos, String detail) {
        return new HoldLog.Event(kind, client, lock, token, nanos, detail);
    }

    @Test
    void eachLockIsJudgedOnItsOwnAndTheWorstIsNamed() {
        // c1 on lock 0 and c2 on lock 1 at the same time: not an overlap; equal tokens on two locks: not backwards
        List<HoldLog.Event> events = List.of(
                on(0, "ACQ", "c1", 7, 10, ""),
                on(1, "ACQ", "c2.1", 7, 11, ""),
                on(0, "WRITE", "c1", 7, 15, "ok"),
                on(1, "WRITE", "c2.1", 7, 16, "ok"),
                on(0, "REL", "c1", 7, 20, ""),
                on(1, "REL", "c2.1", 7, 21, ""),
                // on lock 1, c3 is granted while c2.0 still holds: an overlap on lock 1 only
                on(1, "ACQ", "c2.0", 8, 30, ""),
                on(1, "ACQ", "c3", 9, 35, ""),
                on(1, "WRITE", "c3", 9, 36, "ok"),
                on(1, "REL", "c3", 9, 37, ""),
                on(1, "WRITE", "c2.0", 8, 40, "stale"),
                on(1, "REL", "c2.0", 8, 41, ""));

        LockJudgement report = MutualExclusionJudge.judge(
                events, List.of(register(1, 1, 0), register(2, 2, 1)), List.of("job-0", "job-1"), 0, 50, Stuck.NEVER);

        assertThat(report.locks()).hasSize(2);
        assertThat(report.holds()).hasSize(4);
        assertThat(report.tokensBackwards()).isZero();
        assertThat(report.overlaps()).hasSize(1);
        assertThat(report.overlaps().get(0)[0].lock()).isEqualTo(1);
        assertThat(report.staleStopped()).isEqualTo(1);
        assertThat(report.verdict()).isEqualTo("SAFE_WITH_FENCING");
        assertThat(report.worst().name()).isEqualTo("job-1");
    }

    @Test
    void aLostUpdateOnOneLockOfManyMakesTheRunUnsafeAndThatLockTheWorst() {
        List<HoldLog.Event> events = List.of(
                on(0, "ACQ", "c1", 1, 10, ""), on(0, "REL", "c1", 1, 20, ""),
                on(1, "ACQ", "c2", 1, 10, ""), on(1, "REL", "c2", 1, 20, ""),
                on(2, "ACQ", "c3", 1, 10, ""), on(2, "REL", "c3", 1, 20, ""));

        LockJudgement report = MutualExclusionJudge.judge(
                events,
                List.of(register(1, 1, 0), register(1, 2, 0), register(1, 1, 0)),
                List.of("a", "b", "c"),
                0,
                30,
                Stuck.NEVER);

        assertThat(report.lostUpdates()).isEqualTo(1);
        assertThat(report.verdict()).isEqualTo("UNSAFE");
        assertThat(report.worst().name()).isEqualTo("b");
    }

    @Test
    void aKilledProcessEndsTheHoldsOfEveryOneOfItsLoops() {
        List<HoldLog.Event> events = List.of(
                on(0, "ACQ", "c1.0", 1, 10, ""),
                on(1, "ACQ", "c1.1", 1, 11, ""),
                on(1, "ACQ", "c10", 2, 12, ""),
                e("FAULT", "c1", -1, 20, "kill"),
                on(0, "ACQ", "c2", 2, 30, ""),
                on(0, "REL", "c2", 2, 40, ""),
                on(1, "REL", "c10", 2, 41, ""));

        LockJudgement report = MutualExclusionJudge.judge(
                events, List.of(register(0, 0, 0), register(0, 0, 0)), List.of("a", "b"), 0, 50, Stuck.NEVER);

        assertThat(report.holds())
                .filteredOn(hold -> hold.end().equals("killed"))
                .extracting(Hold::client)
                .containsExactlyInAnyOrder("c1.0", "c1.1");
        assertThat(report.holds())
                .filteredOn(hold -> hold.client().equals("c10"))
                .extracting(Hold::end)
                .containsExactly("released");
        assertThat(report.recoveriesNanos()).containsExactly(10L);
    }

    @Test
    void onlyAPauseThatStoppedAClientHoldingALockCountsAsAPauseOfAHolder() {
        List<HoldLog.Event> events = List.of(
                on(0, "ACQ", "c1.1", 1, 10, ""),
                e("FAULT", "c1", -1, 12, "pause 2s"),
                e("FAULT", "c1", -1, 13, "confirmed pause: the kernel shows the process stopped"),
                e("FAULT", "c1", -1, 30, "resume"),
                on(0, "REL", "c1.1", 1, 31, ""),
                // c2 is paused between two holds: it tests its waiting, not its lease
                on(0, "ACQ", "c2", 2, 40, ""),
                on(0, "REL", "c2", 2, 45, ""),
                e("FAULT", "c2", -1, 46, "pause 2s"),
                e("FAULT", "c2", -1, 47, "confirmed pause: the kernel shows the process stopped"),
                e("FAULT", "c2", -1, 60, "resume"));

        LockJudgement report =
                MutualExclusionJudge.judge(events, List.of(register(0, 0, 0)), List.of("a"), 0, 70, Stuck.NEVER);

        assertThat(report.confirmations(true)).containsEntry("pause", 2);
        assertThat(report.pausesOfHolders()).isEqualTo(1);
        assertThat(report.text("t")).contains("pauses of a holder:    1 of 2 confirmed pauses");
    }

    @Test
    void aClientThatEndedUnaskedHeldItsLocksUntilItsLastLineAndIsReportedApart() {
        List<HoldLog.Event> events = List.of(
                on(0, "ACQ", "c1", 1, 10, ""),
                on(0, "READ", "c1", 1, 12, "0"),
                on(0, "ACQ", "c2", 2, 30, ""),
                on(0, "REL", "c2", 2, 40, ""),
                e(
                        "FAULT",
                        "c1",
                        -1,
                        50,
                        FaultInjector.EXITED + " unasked (exit code 1): a new client takes its place"));

        LockJudgement report =
                MutualExclusionJudge.judge(events, List.of(register(0, 0, 0)), List.of("a"), 0, 70, Stuck.NEVER);

        assertThat(report.holds())
                .filteredOn(hold -> hold.client().equals("c1"))
                .singleElement()
                .satisfies(hold -> assertThat(hold.endNanos()).isEqualTo(12L));
        assertThat(report.overlaps()).isEmpty();
        assertThat(report.text("t")).contains("clients that ended unasked (replaced): 1");
    }

    @Test
    void eventLinesKeepTheirLock() {
        HoldLog.Event event = on(3, "ACQ", "c1.2", 42, 1234, "some detail");

        assertThat(HoldLog.Event.parse(event.line())).isEqualTo(event);
        assertThat(HoldLog.Event.parse(e("END", "c1", -1, 5, "").line()).lock()).isEqualTo(HoldLog.NO_LOCK);
    }

    @Test
    void aLockAskedForAndGrantedToNobodyAtTheEndIsStuck() {
        List<HoldLog.Event> events = List.of(
                on(0, "ACQ", "c1", -1, 10, ""),
                on(0, "REL", "c1", -1, 20, ""),
                on(1, "ACQ", "c2", -1, 10, ""),
                on(1, "REL", "c2", -1, 20, ""),
                on(0, "ENGINE", "c1", -1, 600, CheckWorkerCommand.BUSY),
                on(1, "ACQ", "c2", -1, 650, ""),
                on(1, "REL", "c2", -1, 660, ""));
        List<Register.State> registers = List.of(register(0, 0, 0), register(0, 0, 0));

        LockJudgement report =
                MutualExclusionJudge.judge(events, registers, List.of("a", "b"), 0, 1100, new Stuck(1000, 500, 100));
        LockJudgement notAsked = MutualExclusionJudge.judge(
                events.stream().filter(event -> !event.kind().equals("ENGINE")).toList(),
                registers,
                List.of("a", "b"),
                0,
                1100,
                new Stuck(1000, 500, 100));

        assertThat(report.stuckLocks()).extracting(LockReport::name).containsExactly("a");
        assertThat(report.stuckLocks().get(0).stuckNanos()).isEqualTo(990);
        assertThat(report.verdict()).isEqualTo("STUCK");
        assertThat(report.longestGapNanos())
                .as("the stuck lock's gap runs to the stop")
                .isEqualTo(990);
        assertThat(notAsked.stuckLocks())
                .as("a lock nobody asked for is idle, not stuck")
                .isEmpty();
        assertThat(notAsked.verdict()).isEqualTo("SAFE");
        List<HoldLog.Event> serverDown = new java.util.ArrayList<>(events);
        serverDown.add(e("FAULT", "server", -1, 700, "leader-kill server 2 (leader)"));
        assertThat(MutualExclusionJudge.judge(
                                serverDown, registers, List.of("a", "b"), 0, 1100, new Stuck(1000, 500, 100))
                        .stuckLocks())
                .as("a server fault in the window: unavailable, not stuck")
                .isEmpty();
    }

    @Test
    void aTryRefusedByAHoldThatJustEndedOrIsStillOpenIsNotStuck() {
        // the run of a loaded machine: the last ask for lock 0 ran out 2 ns after the last holder released it, and
        // nobody asked again; that refusal is the holder's, not the lock's
        Stuck stuck = new Stuck(1000, 500, 100);
        List<Register.State> registers = List.of(register(0, 0, 0));
        List<HoldLog.Event> releasedJustBefore = List.of(
                on(0, "ACQ", "c1.1", 1, 10, ""),
                on(0, "REL", "c1.1", 1, 598, ""),
                on(0, "ENGINE", "c2.1", -1, 600, CheckWorkerCommand.BUSY));
        List<HoldLog.Event> stillHeld =
                List.of(on(0, "ACQ", "c1.1", 1, 10, ""), on(0, "ENGINE", "c2.1", -1, 900, CheckWorkerCommand.BUSY));
        List<HoldLog.Event> holderKilledJustBefore = List.of(
                on(0, "ACQ", "c1.1", 1, 10, ""),
                e("FAULT", "c1", -1, 560, "kill"),
                on(0, "ENGINE", "c2.1", -1, 600, CheckWorkerCommand.BUSY));
        List<HoldLog.Event> askedAgainLater = List.of(
                on(0, "ACQ", "c1.1", 1, 10, ""),
                e("FAULT", "c1", -1, 560, "kill"),
                on(0, "ENGINE", "c2.1", -1, 600, CheckWorkerCommand.BUSY),
                on(0, "ENGINE", "c2.1", -1, 700, CheckWorkerCommand.BUSY));

        for (List<HoldLog.Event> explained : List.of(releasedJustBefore, stillHeld, holderKilledJustBefore)) {
            assertThat(MutualExclusionJudge.judge(explained, registers, List.of("a"), 0, 1100, stuck)
                            .stuckLocks())
                    .as("%s", explained)
                    .isEmpty();
        }
        assertThat(MutualExclusionJudge.judge(askedAgainLater, registers, List.of("a"), 0, 1100, stuck)
                        .stuckLocks())
                .as("asked again a lease and a try after the holder was killed")
                .extracting(LockReport::name)
                .containsExactly("a");
    }

    @Test
    void aHoldLoggedBetweenTheKillSignalAndTheDeathEndsAtTheProcesssLastLineNotAtTheConfirmation() {
        // c1.1 was granted after the checker logged "kill" and died before writing; the OS freed the lock at its death,
        // c2 was granted before the checker saw the process gone: no overlap
        List<HoldLog.Event> events = List.of(
                e("FAULT", "c1", -1, 100, "kill"),
                on(0, "ACQ", "c1.1", 5, 101, ""),
                on(0, "READ", "c1.1", 5, 102, "0"),
                on(0, "ACQ", "c2", 6, 110, ""),
                e("FAULT", "c1", -1, 115, "confirmed kill: the process exited"),
                on(0, "WRITE", "c2", 6, 120, "ok"),
                on(0, "REL", "c2", 6, 121, ""));

        LockJudgement report = MutualExclusionJudge.judge(events, register(1, 1, 0), 0, 200);

        assertThat(report.holds())
                .filteredOn(hold -> hold.client().equals("c1.1"))
                .extracting(Hold::endNanos)
                .containsExactly(102L);
        assertThat(report.overlaps()).isEmpty();
        assertThat(report.verdict()).isEqualTo("SAFE");
    }

    @Test
    void aKilledProcesssHoldLastsUntilItsLastLineOnAnyLock() {
        // c1.1 was granted lock 0 after the kill signal; loop c1.2 still logged on lock 1 at 112, so the process was
        // alive then,
        // holding lock 0, when c2 was granted lock 0 at 110: an overlap, though c1's last line on lock 0 came before
        List<HoldLog.Event> events = List.of(
                e("FAULT", "c1", -1, 100, "kill"),
                on(0, "ACQ", "c1.1", 5, 101, ""),
                on(0, "READ", "c1.1", 5, 102, "0"),
                on(0, "ACQ", "c2", 6, 110, ""),
                on(1, "READ", "c1.2", 3, 112, "0"),
                e("FAULT", "c1", -1, 115, "confirmed kill: the process exited"),
                on(0, "WRITE", "c2", 6, 120, "ok"),
                on(0, "REL", "c2", 6, 121, ""));

        LockJudgement report = MutualExclusionJudge.judge(
                events, List.of(register(1, 1, 0), register(0, 0, 0)), List.of("a", "b"), 0, 200, Stuck.NEVER);

        assertThat(report.locks().get(0).holds())
                .filteredOn(hold -> hold.client().equals("c1.1"))
                .extracting(Hold::endNanos)
                .containsExactly(112L);
        assertThat(report.locks().get(0).overlaps()).hasSize(1);
    }

    @Test
    void aSoaksRecoveriesAfterKillsAreSummarisedNotListed() {
        // 25 holders killed, the next granted 1 ms, 2 ms, ... 25 ms after each kill
        List<HoldLog.Event> events = new java.util.ArrayList<>();
        for (int i = 0; i < 25; i++) {
            long at = i * 1_000_000_000L;
            events.add(e("ACQ", "c" + i, 2 * i, at, ""));
            events.add(e("FAULT", "c" + i, -1, at + 100, "kill"));
            events.add(e("ACQ", "d" + i, 2 * i + 1, at + 100 + (i + 1) * 1_000_000L, ""));
            events.add(e("REL", "d" + i, 2 * i + 1, at + 200_000_000L, ""));
        }

        String text = MutualExclusionJudge.judge(events, register(0, 0, 0), 0, 25_000_000_000L)
                .text("title");

        assertThat(text)
                .contains("recovery after a holder was killed: 25 holds ended by a kill: min 1.0 ms, median 13.0 ms,"
                        + " 99th percentile 25.0 ms, max 25.0 ms");
    }
}
