package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InspectCommandTest {
    private static final Duration QUICK = Duration.ofSeconds(15);

    @TempDir
    Path dir;

    @Test
    void showsTheLockHeldByARunningExec() {
        String engine = "file:" + dir.resolve("locks");
        try (ManagedProcess holder = Cli.start("exec", "--engine", engine, "--name", "nightly:report", "--",
                "sh", "-c", "echo STARTED; read line")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result table = Cli.run(QUICK, "inspect", "--engine", engine);
            Cli.Result filtered = Cli.run(QUICK, "inspect", "--engine", engine, "other:");

            assertThat(table.exitCode()).as(table.toString()).isZero();
            assertThat(table.stdout().lines()).hasSize(2);
            assertThat(table.stdout().lines().findFirst()).hasValueSatisfying(header ->
                    assertThat(header).matches("NAME +MODE +HOLDER +FENCE +LEASE LEFT +WAITERS"));
            assertThat(table.stdout().lines().skip(1).findFirst()).hasValueSatisfying(row ->
                    assertThat(row).startsWith("nightly:report").contains("exclusive").contains(holder.pid() + "@"));
            assertThat(filtered.exitCode()).as(filtered.toString()).isZero();
            assertThat(filtered.stdout()).isEqualTo("no locks held" + System.lineSeparator());
            holder.send("done");
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK))).isZero();
        }
    }
}
