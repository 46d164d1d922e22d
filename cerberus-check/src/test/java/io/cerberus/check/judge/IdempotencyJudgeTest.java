package io.cerberus.check.judge;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.EffectLedger;
import io.cerberus.check.log.HoldLog;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The judge of {@code cerberus check --idempotency} on hand-made logs and ledgers. */
class IdempotencyJudgeTest {
    private static final Duration LEASE = Duration.ofNanos(90);

    private static HoldLog.Event e(String kind, String client, long key, long nanos, String detail) {
        return new HoldLog.Event(kind, client, key, nanos, detail);
    }

    private static EffectLedger.Effect effect(long key, String submission, String payload, long nanos) {
        return new EffectLedger.Effect(key, submission, submission.substring(0, 2), payload, nanos);
    }

    private static IdempotencyReport judge(
            List<HoldLog.Event> events, List<EffectLedger.Effect> effects, boolean forgets) {
        return IdempotencyJudge.judge(events, effects, LEASE, forgets, 1_000);
    }

    /** c1 runs key 7 and completes; c2 is served the replay; c2 reuses the key with another payload and is refused. */
    private static List<HoldLog.Event> onceThenReplayed() {
        return List.of(
                e("SUBMIT", "c1", 7, 10, "c1-1.1 ok"),
                e("CLAIM", "c1", 7, 11, "c1-1.1"),
                e("EFFECT", "c1", 7, 20, "c1-1.1"),
                e("COMPLETED", "c1", 7, 21, "c1-1.1"),
                e("ACK", "c1", 7, 22, "c1-1.1 EXECUTED c1-1.1"),
                e("SUBMIT", "c2", 7, 15, "c2-1.1 ok"),
                e("ACK", "c2", 7, 30, "c2-1.1 REPLAYED c1-1.1"),
                e("SUBMIT", "c2", 7, 40, "c2-2.1 other"),
                e("REFUSED", "c2", 7, 41, "c2-2.1"));
    }

    @Test
    void oneEffectPerKeyWithReplaysAndRefusedMismatchesIsSafe() {
        IdempotencyReport report = judge(sorted(onceThenReplayed()), List.of(effect(7, "c1-1.1", "ok", 20)), false);

        assertThat(report.verdict()).isEqualTo("SAFE");
        assertThat(report.duplicates()).isZero();
        assertThat(report.executed()).isEqualTo(1);
        assertThat(report.replays()).isEqualTo(1);
        assertThat(report.mismatchesSubmitted()).isEqualTo(1);
        assertThat(report.mismatchesRefused()).isEqualTo(1);
        assertThat(report.longestUnservedNanos())
                .isEqualTo(15); // c2's first operation: submitted at 15, replayed at 30
    }

    @Test
    void anApplierKilledBeforeItsCompletionExplainsTheSecondEffect() {
        List<HoldLog.Event> events = sorted(List.of(
                e("SUBMIT", "c1", 7, 10, "c1-1.1 ok"),
                e("CLAIM", "c1", 7, 11, "c1-1.1"),
                e("EFFECT", "c1", 7, 20, "c1-1.1"),
                e("FAULT", "c1", -1, 21, "kill"),
                e("SUBMIT", "c2", 7, 150, "c2-1.1 ok"),
                e("CLAIM", "c2", 7, 151, "c2-1.1"),
                e("EFFECT", "c2", 7, 160, "c2-1.1"),
                e("COMPLETED", "c2", 7, 161, "c2-1.1"),
                e("ACK", "c2", 7, 162, "c2-1.1 EXECUTED c2-1.1")));

        IdempotencyReport report =
                judge(events, List.of(effect(7, "c1-1.1", "ok", 20), effect(7, "c2-1.1", "ok", 160)), false);

        assertThat(report.duplicates()).isEqualTo(1);
        assertThat(report.explained()).containsEntry("killed before completing", 1);
        assertThat(report.insideAnOperation())
                .as("the kill hit c1 between its claim and its completion")
                .containsEntry("kill", 1);
        assertThat(report.unexplained()).isEmpty();
        assertThat(report.verdict()).isEqualTo("DUPLICATES_EXPLAINED");
    }

    @Test
    void anApplierPausedPastTheLeaseExplainsTheDuplicateButAShortPauseDoesNot() {
        List<HoldLog.Event> longPause = pausedApplier(100);
        List<HoldLog.Event> shortPause = pausedApplier(30);
        List<EffectLedger.Effect> effects = List.of(effect(7, "c2-1.1", "ok", 130), effect(7, "c1-1.1", "ok", 200));

        IdempotencyReport explained = judge(longPause, effects, false);
        IdempotencyReport unexplained = judge(shortPause, effects, false);

        assertThat(explained.explained()).containsEntry("paused past the lease", 1);
        assertThat(explained.verdict()).isEqualTo("DUPLICATES_EXPLAINED");
        assertThat(unexplained.unexplained()).containsEntry("dropout with no fault", 1);
        assertThat(unexplained.verdict()).isEqualTo("UNSAFE");
    }

    /** c1 claims key 7 and is paused; c2 runs it and completes; c1 applies its effect late, and its completion is refused. */
    private static List<HoldLog.Event> pausedApplier(long pause) {
        return sorted(List.of(
                e("SUBMIT", "c1", 7, 10, "c1-1.1 ok"),
                e("CLAIM", "c1", 7, 11, "c1-1.1"),
                e("FAULT", "c1", -1, 12, "pause"),
                e("FAULT", "c1", -1, 12 + pause, "resume"),
                e("SUBMIT", "c2", 7, 110, "c2-1.1 ok"),
                e("CLAIM", "c2", 7, 120, "c2-1.1"),
                e("EFFECT", "c2", 7, 130, "c2-1.1"),
                e("COMPLETED", "c2", 7, 131, "c2-1.1"),
                e("ACK", "c2", 7, 132, "c2-1.1 EXECUTED c2-1.1"),
                e("EFFECT", "c1", 7, 200, "c1-1.1"),
                e("COMPLETE_FAILED", "c1", 7, 201, "c1-1.1"),
                e("RETRY", "c1", 7, 202, "c1-1.1 completion-failed")));
    }

    @Test
    void aKeyCompletedTwiceWithNoFaultIsUnsafe() {
        List<HoldLog.Event> events = sorted(List.of(
                e("CLAIM", "c1", 7, 11, "c1-1.1"),
                e("COMPLETED", "c1", 7, 21, "c1-1.1"),
                e("ACK", "c1", 7, 22, "c1-1.1 EXECUTED c1-1.1"),
                e("CLAIM", "c2", 7, 31, "c2-1.1"),
                e("COMPLETED", "c2", 7, 41, "c2-1.1"),
                e("ACK", "c2", 7, 42, "c2-1.1 EXECUTED c2-1.1")));

        IdempotencyReport report =
                judge(events, List.of(effect(7, "c1-1.1", "ok", 20), effect(7, "c2-1.1", "ok", 40)), false);

        assertThat(report.unexplained()).containsEntry("completed twice", 1);
        assertThat(report.verdict()).isEqualTo("UNSAFE");
        assertThat(report.keysWithTwoResults()).isEqualTo(1);
    }

    @Test
    void aCompletedRecordForgottenByARestartedStoreIsNamedAndStillUnsafe() {
        List<HoldLog.Event> events = sorted(List.of(
                e("CLAIM", "c1", 7, 11, "c1-1.1"),
                e("COMPLETED", "c1", 7, 21, "c1-1.1"),
                e("ACK", "c1", 7, 22, "c1-1.1 EXECUTED c1-1.1"),
                e("FAULT", "server", -1, 25, "server-kill"),
                e("FAULT", "server", -1, 27, "server-restart"),
                e("FAULT", "server", -1, 28, "confirmed server-kill: gone, then back"),
                e("CLAIM", "c2", 7, 31, "c2-1.1"),
                e("COMPLETED", "c2", 7, 41, "c2-1.1"),
                e("ACK", "c2", 7, 42, "c2-1.1 EXECUTED c2-1.1")));

        IdempotencyReport report =
                judge(events, List.of(effect(7, "c1-1.1", "ok", 20), effect(7, "c2-1.1", "ok", 40)), true);

        assertThat(report.unexplained()).containsEntry("completed record forgotten by the restarted store", 1);
        assertThat(report.verdict()).isEqualTo("UNSAFE");
        assertThat(report.faultCounts()).containsEntry("server-kill", 1).containsEntry("server-restart", 1);
        assertThat(report.confirmed()).containsEntry("server-kill", 1);
    }

    @Test
    void anAcknowledgementOfAnEffectNeverAppliedAndAnAppliedMismatchAreUnsafe() {
        IdempotencyReport neverApplied = judge(sorted(onceThenReplayed()), List.of(), false);
        IdempotencyReport mismatch = judge(
                sorted(onceThenReplayed()),
                List.of(effect(7, "c1-1.1", "ok", 20), effect(7, "c2-2.1", "other", 41)),
                false);

        assertThat(neverApplied.acknowledgedNeverApplied()).isEqualTo(2); // the execution and the replay
        assertThat(neverApplied.verdict()).isEqualTo("UNSAFE");
        assertThat(mismatch.mismatchesApplied()).isEqualTo(1);
        assertThat(mismatch.duplicates()).isZero();
        assertThat(mismatch.verdict()).isEqualTo("UNSAFE");
    }

    @Test
    void aRunInWhichNothingWasExecutedIsNoProgressNeverSafe() {
        IdempotencyReport report = judge(
                List.of(e("SUBMIT", "c1", 7, 10, "c1-1.1 ok"), e("RETRY", "c1", 7, 20, "c1-1.1 store-unavailable")),
                List.of(),
                false);

        assertThat(report.verdict()).isEqualTo("NO_PROGRESS");
        assertThat(report.retries()).containsEntry("store-unavailable", 1);
    }

    private static List<HoldLog.Event> sorted(List<HoldLog.Event> events) {
        return events.stream()
                .sorted(java.util.Comparator.comparingLong(HoldLog.Event::nanos))
                .toList();
    }
}
