package io.cerberus.check.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Fence;
import io.cerberus.check.log.CheckLocks;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import io.cerberus.check.log.Registers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The status line's text ({@link CheckProgress}), from the counts and from the logs and registers of a run. */
class CheckProgressTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path dir;

    @Test
    void theLockCheckLineShowsTimeHoldsFaultsAndWhatIsAlreadyLost() {
        CheckProgress.Counts counts = new CheckProgress.Counts(341, 0, 0, 4, 3, 0, 2, 0);

        assertThat(CheckProgress.format(CheckProgress.Phase.RUNNING, false, 12 * SECOND, 20 * SECOND, counts))
                .isEqualTo(
                        "check 0:12 elapsed, 0:08 left | holds 341 | faults 4 (3 confirmed) | stale writes 2 | lost updates 0");
        assertThat(CheckProgress.format(
                        CheckProgress.Phase.RUNNING,
                        false,
                        3725 * SECOND,
                        7200 * SECOND,
                        new CheckProgress.Counts(9, 0, 0, 5, 3, 1, 0, 7)))
                .isEqualTo(
                        "check UNSAFE 1:02:05 elapsed, 57:55 left | holds 9 | faults 5 (3 confirmed, 1 NOT) | stale writes 0"
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
        assertThat(CheckProgress.format(
                        CheckProgress.Phase.RUNNING,
                        true,
                        5 * SECOND,
                        60 * SECOND,
                        new CheckProgress.Counts(120, 118, 1, 2, 2, 0, 0, 0)))
                .isEqualTo(
                        "check --idempotency 0:05 elapsed, 0:55 left | acknowledged 120, effects 118 | faults 2 (2 confirmed)"
                                + " | duplicates 1");
    }

    @Test
    void theCountsComeFromTheLogsAndTheRegistersAsTheyGrow() throws Exception {
        Registers registers = Registers.open(null, new CheckLocks("lock", dir.resolve("register"), 1), true);
        registers.reset();
        Register register = registers.registers().get(0);
        try (HoldLog client = new HoldLog(dir.resolve("c1.log"));
                HoldLog faults = new HoldLog(dir.resolve("faults.log"))) {
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
            register.write(1, new Fence(0, 1));
            register.write(1, new Fence(0, 2)); // a second write of the same value: one update lost

            assertThat(progress.text())
                    .matches(
                            "check UNSAFE 0:\\d\\d elapsed, 0:\\d\\d left \\| holds 2 \\| faults 2 \\(1 confirmed, 1 NOT\\)"
                                    + " \\| stale writes 1 \\| lost updates 1");
            client.log("ACQ", "c1", 0, 3, "");
            Files.writeString(
                    dir.resolve("c2.log"),
                    "ACQ c2 0 4 123",
                    java.nio.file.StandardOpenOption.CREATE_NEW); // a line not yet ended
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

            assertThat(progress.text())
                    .contains("| acknowledged 2, effects 3 |")
                    .endsWith("| duplicates 1");
        }
    }
}
