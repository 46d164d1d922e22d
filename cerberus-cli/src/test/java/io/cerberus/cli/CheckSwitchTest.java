package io.cerberus.cli;

import static io.cerberus.cli.CheckRuns.confirmed;
import static io.cerberus.cli.CheckRuns.count;
import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Fence;
import io.cerberus.check.log.HoldLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cerberus check --second-engine URI --faults switch}: every client is sent to the other engine in turn (a
 * failover, then a fail-back), while holders are paused and killed; the register is written with each lease's fence,
 * whose epoch each switch raises, so no update is lost and no fence goes backwards.
 */
class CheckSwitchTest {
    @TempDir
    Path dir;

    @Test
    void aFailoverAndAFailBackBetweenTwoEnginesLoseNoUpdateAndRaiseTheEpochEachTime() throws Exception {
        Path first = Files.createDirectories(dir.resolve("first"));
        Path second = Files.createDirectories(dir.resolve("second"));
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                "file:" + first,
                "--second-engine",
                "file:" + second,
                "--faults",
                "switch,pause,switch,kill",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("switching to and from file:" + second);
        assertThat(confirmed(run.stdout(), "switch")).as(run.stdout()).isGreaterThanOrEqualTo(2);
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
        long firstEpoch = Long.parseLong(Files.readString(first.resolve("default.epoch")));
        long secondEpoch = Long.parseLong(Files.readString(second.resolve("default.epoch")));
        assertThat(List.of(firstEpoch, secondEpoch))
                .as(
                        "each engine raised when switched to (a failover and a fail-back at least), the last above the other")
                .allMatch(epoch -> epoch > 0)
                .doesNotHaveDuplicates();
        long epochs = HoldLog.readAll(dir.resolve("out")).stream()
                .filter(event -> event.kind().equals("ACQ"))
                .mapToLong(event -> Fence.ofLong(event.token()).epoch())
                .distinct()
                .count();
        assertThat(epochs).as("holds granted in several epochs").isGreaterThanOrEqualTo(2);
    }

    @Test
    void aSwitchNeedsASecondEngineAndASecondEngineASwitch() {
        Cli.Result noSecond = CheckRuns.check(dir, "--engine", "file:" + dir, "--faults", "switch");
        assertThat(noSecond.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noSecond.stderr()).contains("--faults switch needs --second-engine URI");

        Cli.Result noSwitch = CheckRuns.check(dir, "--engine", "file:" + dir, "--second-engine", "file:" + dir);
        assertThat(noSwitch.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noSwitch.stderr()).contains("--second-engine needs switch in --faults");
    }
}
