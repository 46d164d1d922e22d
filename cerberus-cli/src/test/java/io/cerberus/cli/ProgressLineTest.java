package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The status line's text ({@link CheckProgress}) and how it is written ({@link ProgressLine}), without a run. */
class ProgressLineTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path dir;

    @Test
    void theLockCheckLineShowsTimeHoldsFaultsAndWhatIsAlreadyLost() {
        CheckProgress.Counts counts = new CheckProgress.Counts(341, 0, 0, 4, 3, 0, 2, 0);

        assertThat(CheckProgress.format(CheckProgress.Phase.RUNNING, false, 12 * SECOND, 20 * SECOND, counts))
                .isEqualTo("check 0:12 elapsed, 0:08 left | holds 341 | faults 4 (3 confirmed) | stale writes 2 | lost updates 0");
        assertThat(CheckProgress.format(CheckProgress.Phase.RUNNING, false, 3725 * SECOND, 7200 * SECOND,
                new CheckProgress.Counts(9, 0, 0, 5, 3, 1, 0, 7)))
                .isEqualTo("check UNSAFE 1:02:05 elapsed, 57:55 left | holds 9 | faults 5 (3 confirmed, 1 NOT) | stale writes 0"
                        + " | lost updates 7");
        assertThat(CheckProgress.format(CheckProgress.Phase.STARTING, false, 2 * SECOND, 20 * SECOND, counts))
                .startsWith("check starting clients 0:02 | holds 341");
        assertThat(CheckProgress.format(CheckProgress.Phase.STOPPING, false, 21 * SECOND, 20 * SECOND, counts))
                .startsWith("check 0:21 elapsed, stopping clients | ");
        assertThat(CheckProgress.format(CheckProgress.Phase.JUDGING, false, 22 * SECOND, 20 * SECOND, counts))
                .startsWith("check 0:22 elapsed, judging | ");
    }

    @Test
    void theIdempotencyCheckLineShowsOperationsEffectsAndDuplicates() {
        assertThat(CheckProgress.format(CheckProgress.Phase.RUNNING, true, 5 * SECOND, 60 * SECOND,
                new CheckProgress.Counts(120, 118, 1, 2, 2, 0, 0, 0)))
                .isEqualTo("check --idempotency 0:05 elapsed, 0:55 left | acknowledged 120, effects 118 | faults 2 (2 confirmed)"
                        + " | duplicates 1");
    }

    @Test
    void theCountsComeFromTheLogsAndTheRegistersAsTheyGrow() throws Exception {
        FencedRegister register = FencedRegister.create(dir.resolve("register"), true);
        try (HoldLog client = new HoldLog(dir.resolve("c1.log")); HoldLog faults = new HoldLog(dir.resolve("faults.log"))) {
            CheckProgress progress = new CheckProgress(dir, false, 20 * SECOND, List.of(register));
            progress.running();
            client.log("ACQ", "c1", 0, 1, "");
            client.log("WRITE", "c1", 0, 1, "ok");
            client.log("ACQ", "c1", 0, 2, "");
            client.log("WRITE", "c1", 0, 1, "stale");
            faults.log("FAULT", "c2", -1, "pause 1.0s");
            faults.log("FAULT", "c2", -1, "confirmed pause: the kernel shows the process stopped");
            faults.log("FAULT", "c2", -1, "resume");
            faults.log("FAULT", "c3", -1, "kill");
            faults.log("FAULT", "c3", -1, "unconfirmed kill: still running");
            register.write(1, 1);
            register.write(1, 2); // a second write of the same value: one update lost

            assertThat(progress.text()).matches("check UNSAFE 0:\\d\\d elapsed, 0:\\d\\d left \\| holds 2 \\| faults 2 \\(1 confirmed, 1 NOT\\)"
                    + " \\| stale writes 1 \\| lost updates 1");
            client.log("ACQ", "c1", 0, 3, "");
            Files.writeString(dir.resolve("c2.log"), "ACQ c2 0 4 123", java.nio.file.StandardOpenOption.CREATE_NEW); // a line not yet ended
            assertThat(progress.text()).contains("| holds 3 |");
            Files.writeString(dir.resolve("c2.log"), "\n", java.nio.file.StandardOpenOption.APPEND);
            assertThat(progress.text()).contains("| holds 4 |").startsWith("check UNSAFE ");
        }
    }

    @Test
    void theIdempotencyCountsComeFromTheAcknowledgementsAndTheLedger() throws Exception {
        try (HoldLog client = new HoldLog(dir.resolve("c1.log"))) {
            CheckProgress progress = new CheckProgress(dir, true, 20 * SECOND, List.of());
            client.log("ACK", "c1", 7, "s1 executed r");
            client.log("ACK", "c1", 7, "s2 replayed r");
            Files.writeString(dir.resolve("ledger.txt"), "7 s1 c1 p 1\n8 s3 c1 p 2\n7 s4 c2 p 3\n");

            assertThat(progress.text()).contains("| acknowledged 2, effects 3 |").endsWith("| duplicates 1");
        }
    }

    @Test
    void plainLinesComeEveryPeriodWithoutEscapeCodesAndNoneComeWithNone() {
        StringWriter plain = new StringWriter();
        try (ProgressLine line = ProgressLine.start("line", Duration.ofSeconds(1), new PrintWriter(plain), () -> "check 0:01 elapsed")) {
            assertThat(line.live()).isFalse();
            awaitTrue(() -> plain.toString().split("\n").length >= 2);
        }
        assertThat(plain.toString()).startsWith("check 0:01 elapsed\ncheck 0:01 elapsed\n").doesNotContain("\r").doesNotContain("\u001b");

        StringWriter none = new StringWriter();
        ProgressLine.start("none", Duration.ofSeconds(1), new PrintWriter(none), () -> "never").close();
        assertThat(none.toString()).isEmpty();
    }

    @Test
    void aLiveLineIsRewrittenInPlaceCutToTheWidthAndClearedOnClose() {
        StringWriter screen = new StringWriter();
        try (ProgressLine line = ProgressLine.live(new PrintWriter(screen), () -> "x".repeat(30), 21)) {
            assertThat(line.live()).isTrue();
            awaitTrue(() -> screen.toString().contains("\u001b[K"));
        }
        assertThat(screen.toString()).startsWith("\r" + "x".repeat(17) + "...\u001b[K").endsWith("\r\u001b[K").doesNotContain("\n");
    }

    @Test
    void whatOthersPrintOnStandardErrorFirstClearsALiveLine() {
        StringWriter screen = new StringWriter();
        java.io.PrintStream before = System.err;
        java.io.ByteArrayOutputStream others = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(others, true, java.nio.charset.StandardCharsets.UTF_8));
        try (ProgressLine line = ProgressLine.live(new PrintWriter(screen), () -> "check 0:01 elapsed", 80)) {
            assertThat(line.live()).isTrue();
            awaitTrue(() -> screen.toString().contains("\u001b[K"));
            System.err.println("check client c1: refused; trying again");
            assertThat(screen.toString()).as("the line, then cleared").contains("elapsed\u001b[K\r\u001b[K");
        } finally {
            System.setErr(before);
        }
        assertThat(others.toString(java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("check client c1: refused; trying again\n");
    }

    @Test
    void theClockAndTheCutAreWhatATerminalShows() {
        assertThat(ProgressLine.clock(0)).isEqualTo("0:00");
        assertThat(ProgressLine.clock(-5 * SECOND)).isEqualTo("0:00");
        assertThat(ProgressLine.clock(754 * SECOND)).isEqualTo("12:34");
        assertThat(ProgressLine.clock(3723 * SECOND)).isEqualTo("1:02:03");
        assertThat(ProgressLine.cut("short", 80)).isEqualTo("short");
        assertThat(ProgressLine.cut("0123456789", 10)).isEqualTo("012345...");
    }

    @Test
    void aModeOutsideTheListOrAPeriodUnderASecondIsRefused() {
        assertThatThrownBy(() -> ProgressLine.check("bar", Duration.ofSeconds(30))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--progress takes auto, line, none, was 'bar'");
        assertThatThrownBy(() -> ProgressLine.check("line", Duration.ofMillis(500))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--progress-every must be at least 1s, was 500ms");
    }

    /** Polls until the condition holds, failing after 10 s. */
    private static void awaitTrue(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("condition within 10 s").isNegative();
            Thread.onSpinWait();
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
