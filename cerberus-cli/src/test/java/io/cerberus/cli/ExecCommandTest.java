package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.Executables;
import io.cerberus.testkit.ManagedProcess;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExecCommandTest {
    private static final Duration QUICK = Duration.ofSeconds(15);

    @TempDir
    Path dir;
    private String engine;

    @BeforeEach
    void engineInTheTempDir() {
        engine = "file:" + dir.resolve("locks");
    }

    @Test
    void secondCopyDoesNotRunWhileTheFirstRuns() {
        Path other = dir.resolve("other");
        try (ManagedProcess first = Cli.start("exec", "--engine", engine, "--name", "job", "--",
                "sh", "-c", "echo STARTED; read line; echo FINISHING")) {
            first.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result second = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "touch", other.toString());

            assertThat(second.exitCode()).as(second.toString()).isEqualTo(ExitCodes.LOCK_BUSY);
            assertThat(second.stderr()).contains("lock 'job' is busy").contains("held by " + first.pid() + "@");
            assertThat(other).doesNotExist();

            first.send("done");
            first.awaitLine("FINISHING", TestTimes.scaled(QUICK));
            assertThat(first.awaitExit(TestTimes.scaled(QUICK))).isZero();
        }
        Cli.Result third = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "touch", other.toString());
        assertThat(third.exitCode()).as(third.toString()).isZero();
        assertThat(other).exists();
    }

    @Test
    void killedHolderFreesTheLockAndItsCommandDiesWithIt() {
        Executables.require("setpriv", "util-linux");
        long commandPid;
        try (ManagedProcess first = Cli.start("exec", "--engine", engine, "--name", "job", "--",
                "sh", "-c", "echo STARTED $$; exec sleep 60")) {
            commandPid = Long.parseLong(first.awaitLine("STARTED", TestTimes.scaled(QUICK)).split(" ")[1]);
            assertThat(Cli.isRunning(commandPid)).isTrue();

            first.kill(TestTimes.scaled(QUICK));
        }
        try {
            Path other = dir.resolve("other");
            Cli.Result second = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--wait", "5s", "--",
                    "touch", other.toString());

            assertThat(second.exitCode()).as(second.toString()).isZero();
            assertThat(other).exists();
            Poll.until("the killed holder's command to die with it", TestTimes.scaled(QUICK), () -> !Cli.isRunning(commandPid));
        } finally {
            ProcessHandle.of(commandPid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void exitCodeOfTheCommandIsPassedThrough() {
        Cli.Result exited = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "sh", "-c", "exit 7");
        assertThat(exited.exitCode()).as(exited.toString()).isEqualTo(7);

        Cli.Result killed = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "sh", "-c", "kill -KILL $$");
        assertThat(killed.exitCode()).as(killed.toString()).isEqualTo(128 + 9);
    }

    @Test
    void commandSeesTheLockNameAndFencingToken() {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--",
                "sh", "-c", "echo \"$CERBERUS_LOCK_NAME $CERBERUS_FENCING_TOKEN\"");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).matches("job \\d+\\R");
    }

    @Test
    void badWaitIsAUsageError() {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--wait", "5", "--", "true");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr().lines()).singleElement().asString()
                .contains("--wait").contains("'5' is not a duration").contains("500ms, 10s, 2m, 1h");
    }

    @Test
    void missingCommandExits127WithoutTakingTheLock() {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "no-such-command-here");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.COMMAND_NOT_FOUND);
        assertThat(result.stderr()).contains("no-such-command-here: command not found");
    }

    @Test
    void sigtermIsForwardedToTheCommandAndItsStatusReturned() {
        try (ManagedProcess holder = Cli.start("exec", "--engine", engine, "--name", "job", "--",
                "sh", "-c", "trap 'echo TERMINATED; exit 42' TERM; echo STARTED; while :; do sleep 0.05; done")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            holder.signal("TERM");

            holder.awaitLine("TERMINATED", TestTimes.scaled(QUICK));
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK))).as(holder.diagnostics()).isEqualTo(42);
        }
        Cli.Result next = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "true");
        assertThat(next.exitCode()).as("the lock is released: " + next).isZero();
    }

    @Test
    void unknownEngineIsAUsageErrorOnOneLine() throws Exception {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", "nosuch:", "--name", "job", "--", "true");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr().lines()).singleElement().asString().startsWith("cerberus exec: no engine serves 'nosuch:'");
        assertThat(Files.exists(dir.resolve("locks"))).isFalse();
    }
}
