package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.HoldLog;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@code cerberus check} stopped by SIGTERM (a soak stopped by hand) leaves no server and no client running behind it. */
class CheckSignalTest {
    private static final Duration WAIT = TestTimes.scaled(Duration.ofSeconds(60));

    @Test
    void sigtermStopsTheServerItStartedAndEveryClientEvenAPausedOne(@TempDir Path dir) throws Exception {
        try (ManagedProcess check = Cli.start(
                "check",
                "--server",
                "redis",
                "--faults",
                "pause",
                "--fault-every",
                "100ms",
                "--duration",
                "10m",
                "--out",
                dir.resolve("run").toString())) {
            // a pause lasts twice the lease: a client is stopped (SIGSTOP) most of the time; wait for one
            long deadline = System.nanoTime() + WAIT.toNanos();
            List<ProcessHandle> started = List.of();
            while (started.stream().noneMatch(CheckSignalTest::stopped)) {
                assertThat(System.nanoTime() - deadline)
                        .as("a paused client within %s%s", WAIT, check.diagnostics())
                        .isNegative();
                TimeUnit.MILLISECONDS.sleep(20);
                started = ProcessHandle.of(check.pid())
                        .orElseThrow()
                        .descendants()
                        .toList();
            }
            assertThat(started).as("redis-server and three clients").hasSizeGreaterThanOrEqualTo(4);

            check.signal("TERM");

            assertThat(check.awaitExit(WAIT)).as("the exit code of SIGTERM").isEqualTo(143);
            for (ProcessHandle process : started) {
                try {
                    process.onExit().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (TimeoutException stillRunning) {
                    throw new AssertionError(
                            process.pid() + " (" + process.info().commandLine().orElse("?") + ") still runs " + WAIT
                                    + " after the checker's exit",
                            stillRunning);
                }
            }
        }
    }

    @Test
    void aClientThatDiesUnaskedIsReplacedAndItsHoldsEndAtItsLastLine(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("run");
        try (ManagedProcess check = Cli.start(
                "check",
                "--engine",
                "file:" + dir.resolve("locks"),
                "--faults",
                "none",
                "--lease",
                "500ms",
                "--think",
                "50ms",
                "--duration",
                "8s",
                "--out",
                out.toString())) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            String holder = null;
            while (holder == null) {
                assertThat(System.nanoTime() - deadline)
                        .as("a client holding a lock within %s%s", WAIT, check.diagnostics())
                        .isNegative();
                TimeUnit.MILLISECONDS.sleep(20);
                holder = !Files.isDirectory(out)
                        ? null
                        : HoldLog.readAll(out).stream()
                                .filter(event -> event.kind().equals("ACQ"))
                                .map(HoldLog.Event::client)
                                .findFirst()
                                .orElse(null);
            }
            String name = holder;
            ProcessHandle client = ProcessHandle.of(check.pid())
                    .orElseThrow()
                    .descendants()
                    .filter(process -> Cli.commandLine(process.pid()).orElse("").contains(" --client " + name + " "))
                    .findFirst()
                    .orElseThrow();

            client.destroyForcibly(); // not a fault of the checker's: a worker that died of its own

            assertThat(check.awaitExit(WAIT))
                    .as("the exit code of a safe run%s", check.diagnostics())
                    .isZero();
            String report = Files.readString(out.resolve("report.txt"));
            assertThat(report)
                    .contains("verdict:               SAFE")
                    .contains("clients that ended unasked (replaced): 1");
            assertThat(Files.readString(out.resolve("faults.log")))
                    .contains("FAULT " + name + " ")
                    .contains("exited unasked");
            assertThat(HoldLog.read(out.resolve("c4.log")))
                    .as("the client that took its place")
                    .anyMatch(e -> e.kind().equals("ACQ"));
        }
    }

    /** @return whether the kernel shows the process stopped (state T in /proc/PID/stat) */
    private static boolean stopped(ProcessHandle process) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
        } catch (IOException gone) {
            return false;
        }
    }
}
