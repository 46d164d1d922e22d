package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.Executables;
import io.cerberus.testkit.FreePorts;
import io.cerberus.testkit.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An engine password reaches no output of the CLI, no report, no child's command line and no exec'd command. */
class SecretsTest {
    private static final String SECRET = "s3cret-pass";

    @TempDir
    Path dir;

    @Test
    void aCheckShowsThePasswordNowhereNotEvenInItsClientsCommandLines() throws Exception {
        int port = FreePorts.next();
        try (ManagedProcess redis = ManagedProcess.start("redis-server-" + port, List.of(
                Executables.require("redis-server", "redis-server").toString(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--requirepass", SECRET))) {
            FreePorts.awaitAccepting(port, TestTimes.scaled(Duration.ofSeconds(10)), "redis-server");
            Path out = dir.resolve("out");
            try (ManagedProcess check = Cli.start("check", "--engine", "redis://" + SECRET + "@127.0.0.1:" + port, "--out", out.toString(),
                    "--duration", "3s", "--lease", "500ms", "--think", "50ms", "--faults", "pause", "--fault-every", "1s")) {
                List<String> workers = new ArrayList<>();
                long deadline = System.nanoTime() + TestTimes.scaled(Duration.ofSeconds(60)).toNanos();
                while (check.isAlive() && System.nanoTime() - deadline < 0) {
                    // the test's own redis-server and the check (given the URI by this test) aside, no process shows the password
                    ProcessHandle.allProcesses().filter(process -> process.pid() != redis.pid() && process.pid() != check.pid())
                            .forEach(process -> commandLine(process.pid()).ifPresent(line -> {
                                if (line.contains("check-worker")) {
                                    workers.add(line);
                                }
                                assertThat(line).as("a command line").doesNotContain(SECRET);
                            }));
                    Thread.sleep(20);
                }
                assertThat(check.awaitExit(TestTimes.scaled(Duration.ofSeconds(30)))).as(check.diagnostics()).isZero();
                assertThat(workers).as("the check's client JVMs were seen running").isNotEmpty();
                assertThat(check.diagnostics()).doesNotContain(SECRET);
            }
            assertThat(Files.readString(out.resolve("report.txt"))).contains("cerberus check: redis://****@127.0.0.1:" + port)
                    .doesNotContain(SECRET);
            assertThat(Files.readString(out.resolve("timeline.html"))).contains("****@").doesNotContain(SECRET);
        }
    }

    /** @return what {@code ps} shows of a process: its whole command line (ProcessHandle cuts long ones short) */
    private static java.util.Optional<String> commandLine(long pid) {
        try {
            return java.util.Optional.of(new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                    java.nio.charset.StandardCharsets.UTF_8).replace('\0', ' '));
        } catch (java.io.IOException e) {
            return java.util.Optional.empty(); // ended meanwhile, or not ours to read
        }
    }

    @Test
    void execDoesNotHandItsCommandTheEngineVariable() {
        Cli.Result result = Cli.runWith(Map.of(EngineOptions.ENGINE_ENV, "file:" + dir.resolve("locks")),
                Duration.ofSeconds(15), "exec", "--name", "job", "--", "sh", "-c", "echo \"engine=${CERBERUS_ENGINE-unset}\"");
        assertThat(result.stdout()).as(result.toString()).isEqualTo("engine=unset\n");
    }
}
