package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.Executables;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.RedisServer;
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
        try (ManagedProcess first = Cli.start(
                "exec",
                "--engine",
                engine,
                "--name",
                "job",
                "--",
                "sh",
                "-c",
                "echo STARTED; read line; echo FINISHING")) {
            first.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result second =
                    Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "touch", other.toString());

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
        try (ManagedProcess first = Cli.start(
                "exec", "--engine", engine, "--name", "job", "--", "sh", "-c", "echo STARTED $$; exec sleep 60")) {
            commandPid = Long.parseLong(
                    first.awaitLine("STARTED", TestTimes.scaled(QUICK)).split(" ")[1]);
            assertThat(Cli.isRunning(commandPid)).isTrue();

            first.kill(TestTimes.scaled(QUICK));
        }
        try {
            Path other = dir.resolve("other");
            Cli.Result second = Cli.run(
                    QUICK,
                    "exec",
                    "--engine",
                    engine,
                    "--name",
                    "job",
                    "--wait",
                    "5s",
                    "--",
                    "touch",
                    other.toString());

            assertThat(second.exitCode()).as(second.toString()).isZero();
            assertThat(other).exists();
            Poll.until(
                    "the killed holder's command to die with it",
                    TestTimes.scaled(QUICK),
                    () -> !Cli.isRunning(commandPid));
        } finally {
            ProcessHandle.of(commandPid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void exitCodeOfTheCommandIsPassedThrough() {
        Cli.Result exited = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "sh", "-c", "exit 7");
        assertThat(exited.exitCode()).as(exited.toString()).isEqualTo(7);

        Cli.Result killed =
                Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "sh", "-c", "kill -KILL $$");
        assertThat(killed.exitCode()).as(killed.toString()).isEqualTo(128 + 9);
    }

    @Test
    void commandSeesTheLockNameAndFencingToken() {
        Cli.Result result = Cli.run(
                QUICK,
                "exec",
                "--engine",
                engine,
                "--name",
                "job",
                "--",
                "sh",
                "-c",
                "echo \"$CERBERUS_LOCK_NAME $CERBERUS_FENCING_TOKEN\"");
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.stdout()).matches("job \\d+\\R");
    }

    @Test
    void badWaitIsAUsageError() {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--wait", "5", "--", "true");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr().lines())
                .singleElement()
                .asString()
                .contains("--wait")
                .contains("'5' is not a duration")
                .contains("500ms, 10s, 2m, 1h");
    }

    @Test
    void missingCommandExits127WithoutTakingTheLock() {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "no-such-command-here");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.COMMAND_NOT_FOUND);
        assertThat(result.stderr()).contains("no-such-command-here: command not found");
    }

    @Test
    void sigtermIsForwardedToTheCommandAndItsStatusReturned() {
        try (ManagedProcess holder = Cli.start(
                "exec",
                "--engine",
                engine,
                "--name",
                "job",
                "--",
                "sh",
                "-c",
                "trap 'echo TERMINATED; exit 42' TERM; echo STARTED; while :; do sleep 0.05; done")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            holder.signal("TERM");

            holder.awaitLine("TERMINATED", TestTimes.scaled(QUICK));
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK)))
                    .as(holder.diagnostics())
                    .isEqualTo(42);
        }
        Cli.Result next = Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--", "true");
        assertThat(next.exitCode()).as("the lock is released: " + next).isZero();
    }

    @Test
    void unknownEngineIsAUsageErrorOnOneLine() throws Exception {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", "nosuch:", "--name", "job", "--", "true");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr().lines())
                .singleElement()
                .asString()
                .startsWith("cerberus exec: no engine serves 'nosuch:'");
        assertThat(Files.exists(dir.resolve("locks"))).isFalse();
    }

    @Test
    void anEngineThatExcludesNoOtherProcessIsRefused() {
        Path ran = dir.resolve("ran");
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", "mem:", "--name", "job", "--", "touch", ran.toString());
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr().lines())
                .singleElement()
                .asString()
                .startsWith("cerberus exec: engine mem:")
                .contains("inside this one cerberus process")
                .contains("file:DIR");
        assertThat(ran).as("the command was not run").doesNotExist();
    }

    @Test
    void anEtcdThatRefusesConnectionsFailsWith69NotAfterTheTimeout() {
        Cli.Result result = Cli.run(QUICK, "exec", "--engine", "etcd://127.0.0.1:1", "--name", "job", "--", "true");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.ENGINE_UNAVAILABLE);
        assertThat(result.stderr()).contains("etcd://127.0.0.1:1").contains("no member accepts connections");
    }

    @Test
    void anUnknownOnLostActionIsRefused() {
        Cli.Result result =
                Cli.run(QUICK, "exec", "--engine", engine, "--name", "job", "--on-lost", "ignore", "--", "true");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.stderr()).contains("--on-lost must be fail, continue or kill, was 'ignore'");
    }

    /**
     * Holds a lock on Redis with a 1 s lease from a paused {@code cerberus exec}, takes the lock
     * from this JVM once the lease ran out, and lets exec go on: its renewal is refused, the loss is
     * reported in one line, and the exit code says so (or not, with {@code continue}).
     */
    private Cli.Result loseTheLockWhileTheCommandRuns(String onLost, String script) throws Exception {
        try (RedisServer redis = RedisServer.start();
                ManagedProcess exec = Cli.start(
                        "exec",
                        "--engine",
                        redis.uri(),
                        "--name",
                        "job",
                        "--lease",
                        "1s",
                        "--on-lost",
                        onLost,
                        "--",
                        "sh",
                        "-c",
                        script);
                io.cerberus.Cerberus other =
                        io.cerberus.Cerberus.builder().engine(redis.uri()).build()) {
            exec.awaitLine("STARTED", TestTimes.scaled(QUICK));
            exec.signal("STOP");
            io.cerberus.DistributedLock lock = other.lock("job");
            try {
                assertThat(lock.tryLock(
                                TestTimes.scaled(Duration.ofSeconds(5)).toMillis(),
                                java.util.concurrent.TimeUnit.MILLISECONDS))
                        .as("the paused holder's 1 s lease runs out")
                        .isTrue();
            } finally {
                exec.signal("CONT");
            }
            try {
                int exitCode = exec.awaitExit(TestTimes.scaled(QUICK));
                return new Cli.Result(exitCode, "", exec.stderr());
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void aLockLostWhileTheCommandRunsEndsWith79AndOneLine() throws Exception {
        // the command goes on after the loss (fail is the default), then cerberus exits with 79, not the command's 0
        Cli.Result result = loseTheLockWhileTheCommandRuns("fail", "echo STARTED; sleep 2; exit 0");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.LOCK_LOST);
        assertThat(result.stderr().lines())
                .as(result.toString())
                .singleElement()
                .asString()
                .startsWith("cerberus exec: lost lock 'job' while the command ran")
                .contains("exit code 79 when it ends");
    }

    @Test
    void onLostKillStopsTheCommandAtOnce() throws Exception {
        long started = System.nanoTime();
        Cli.Result result = loseTheLockWhileTheCommandRuns("kill", "echo STARTED; exec sleep 60");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.LOCK_LOST);
        assertThat(Duration.ofNanos(System.nanoTime() - started))
                .as("the command was stopped, not waited for")
                .isLessThan(Duration.ofSeconds(30));
        assertThat(result.stderr().lines())
                .as(result.toString())
                .singleElement()
                .asString()
                .contains("lost lock 'job'")
                .contains("stopping the command (SIGTERM");
    }

    @Test
    void onLostContinueKeepsTheCommandsExitCode() throws Exception {
        Cli.Result result = loseTheLockWhileTheCommandRuns("continue", "echo STARTED; sleep 2; exit 3");
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(3);
        assertThat(result.stderr().lines())
                .as(result.toString())
                .singleElement()
                .asString()
                .contains("lost lock 'job'")
                .contains("--on-lost=continue");
    }
}
