package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManagedProcessTest {
    private static final Duration WAIT = Timeouts.scaled(Duration.ofSeconds(10));

    @Test
    void standardOutputIsReadLineByLine() {
        try (ManagedProcess process =
                ManagedProcess.start("echo", List.of("sh", "-c", "echo starting; echo hi; echo there"))) {
            assertThat(process.awaitLine("hi", WAIT)).isEqualTo("hi");
            assertThat(process.nextLine(WAIT)).isEqualTo("there");
            assertThat(process.awaitExit(WAIT)).isZero();
        }
    }

    @Test
    void aShortCommandRunsToItsEndAndGivesItsStandardOutput() {
        assertThat(ManagedProcess.run("two lines", List.of("sh", "-c", "echo one; echo two >&2; echo three"), WAIT))
                .isEqualTo("one\nthree\n");
    }

    @Test
    void aShortCommandThatFailsGivesItsExitCodeAndStandardError() {
        assertThatThrownBy(() -> ManagedProcess.run("failing", List.of("sh", "-c", "echo denied >&2; exit 3"), WAIT))
                .isInstanceOf(ServerException.class)
                .hasMessageContaining("failing failed (exit code 3)")
                .hasMessageContaining("denied");
    }

    @Test
    void aShortCommandThatDoesNotEndInTimeFails() {
        assertThatThrownBy(() -> ManagedProcess.run("sleeper", List.of("sleep", "30"), Duration.ofMillis(200)))
                .isInstanceOf(ServerException.class)
                .hasMessageContaining("sleeper did not end within 200ms");
    }

    @Test
    void aProcessThatEndsFailsTheWaitWithItsStandardError() {
        try (ManagedProcess process = ManagedProcess.start("failing", List.of("sh", "-c", "echo oops >&2; exit 3"))) {
            assertThat(process.awaitExit(WAIT)).isEqualTo(3);
            assertThat(process.stderr()).isEqualTo("oops\n");
            assertThatThrownBy(() -> process.awaitLine("READY", WAIT))
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("waiting for a line starting with 'READY'")
                    .hasMessageContaining("failing ended (exit code 3)")
                    .hasMessageContaining("oops");
        }
    }

    @Test
    void aSilentProcessFailsTheWaitAtTheDeadline() {
        try (ManagedProcess process = ManagedProcess.start("silent", List.of("cat"))) {
            assertThatThrownBy(() -> process.nextLine(Duration.ofMillis(50)))
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("silent printed nothing within 50ms");
        }
    }

    @Test
    void askSendsALineAndReturnsTheAnswer() {
        try (ManagedProcess process = ManagedProcess.start("cat", List.of("cat"))) {
            assertThat(process.ask("ping", WAIT)).isEqualTo("ping");
        }
    }

    @Test
    void killEndsTheProcessAndWaitsForIt() {
        try (ManagedProcess process = ManagedProcess.start("cat", List.of("cat"))) {
            process.kill(WAIT);
            assertThat(process.isAlive()).isFalse();
            assertThatThrownBy(() -> process.signal("CONT"))
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("kill -CONT");
        }
    }

    @Test
    void aSignalNameThatIsNotOneIsRefusedBeforeAnythingIsSent() {
        try (ManagedProcess process = ManagedProcess.start("cat", List.of("cat"))) {
            assertThatThrownBy(() -> process.signal("STOP; rm -rf x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("signal must be a name such as STOP");
            assertThat(process.ask("still there", WAIT)).isEqualTo("still there");
        }
    }

    @Test
    void aStoppedProcessHoldsItsInputUntilItIsContinued() {
        try (ManagedProcess process = ManagedProcess.start("cat", List.of("cat"))) {
            process.signal("STOP");
            Await.until("cat to be stopped", WAIT, () -> state(process) == 'T');
            process.send("held");
            process.signal("CONT");
            Await.until("cat to run again", WAIT, () -> state(process) != 'T');
            assertThat(process.nextLine(WAIT))
                    .as("the line sent while it was stopped")
                    .isEqualTo("held");
        }
    }

    @Test
    void closeKillsAStoppedProcess() {
        ManagedProcess process = ManagedProcess.start("cat", List.of("cat"));
        process.signal("STOP");
        Await.until("cat to be stopped", WAIT, () -> state(process) == 'T');
        process.close();
        assertThat(process.isAlive()).isFalse();
    }

    @Test
    void killEndsTheProcessesItStartedToo() {
        try (ManagedProcess process =
                ManagedProcess.start("forking", List.of("sh", "-c", "sleep 600 & sleep 600 & echo forked; wait"))) {
            process.awaitLine("forked", WAIT);
            List<ProcessHandle> children =
                    ProcessHandle.of(process.pid()).orElseThrow().descendants().toList();
            assertThat(children).hasSize(2);
            process.kill(WAIT);
            assertThat(children).allMatch(ManagedProcessTest::endedOrZombie);
        }
    }

    @Test
    void closeEndsTheProcessesItStartedToo() {
        ManagedProcess process = ManagedProcess.start("forking", List.of("sh", "-c", "sleep 600 & echo forked; wait"));
        process.awaitLine("forked", WAIT);
        List<ProcessHandle> children =
                ProcessHandle.of(process.pid()).orElseThrow().descendants().toList();
        process.close();
        Await.until(
                "the child of a closed process to end",
                WAIT,
                () -> children.stream().allMatch(ManagedProcessTest::endedOrZombie));
    }

    /** A killed child that its new parent (a container's init) has not reaped yet is a zombie, holding nothing. */
    static boolean endedOrZombie(ProcessHandle process) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
        } catch (IOException ended) {
            return true;
        }
    }

    @Test
    void aShortCommandGetsItsEnvironmentAndInput() {
        String output = ManagedProcess.run(
                "echo",
                List.of("sh", "-c", "read line; echo \"$line $SECRET\"; echo ignored >&2"),
                Map.of("SECRET", "s3cret"),
                "hello\n",
                WAIT);
        assertThat(output).isEqualTo("hello s3cret\n");
    }

    @Test
    void aProgramThatCannotBeStartedIsAServerException() {
        assertThatThrownBy(() -> ManagedProcess.start("missing", List.of("/nonexistent/cerberus-no-such-program")))
                .isInstanceOf(ServerException.class)
                .hasMessageContaining("could not start missing: /nonexistent/cerberus-no-such-program");
    }

    @Test
    void aChildJvmGetsItsEngineUriInItsEnvironmentAndTheTimeScale() {
        try (ManagedProcess child =
                ManagedProcess.startJavaWithEngine(PrintEngineUri.class, "mem://secret@host", "extra")) {
            assertThat(child.nextLine(Timeouts.scaled(Duration.ofSeconds(30))))
                    .isEqualTo("mem://secret@host extra " + Timeouts.scale());
            assertThat(child.awaitExit(WAIT)).isZero();
        }
    }

    /** The child JVM of {@link #aChildJvmGetsItsEngineUriInItsEnvironmentAndTheTimeScale}. */
    public static final class PrintEngineUri {
        private PrintEngineUri() {}

        public static void main(String[] args) {
            System.out.println(ManagedProcess.engineUri() + " " + String.join(" ", args) + " " + Timeouts.scale());
        }
    }

    /** @return the process's state letter in {@code /proc/PID/stat}: {@code T} when stopped */
    private static char state(ManagedProcess process) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException e) {
            throw new AssertionError("cannot read the state of " + process.name(), e);
        }
    }

    @Test
    void outputGoesToTheCallersFileWhichOutlivesTheProcess(@TempDir Path dir) throws IOException {
        Path output = dir.resolve("server.out");
        try (ManagedProcess process =
                ManagedProcess.startWithOutput("both", List.of("sh", "-c", "echo out; echo err >&2; exit 2"), output)) {
            assertThat(process.awaitExit(WAIT)).isEqualTo(2);
            assertThat(process.diagnostics())
                    .contains("output (" + output + ")")
                    .contains("out")
                    .contains("err");
        }
        try (ManagedProcess again =
                ManagedProcess.startWithOutput("again", List.of("sh", "-c", "echo again"), output)) {
            again.awaitExit(WAIT);
        }
        assertThat(Files.readAllLines(output)).containsExactlyInAnyOrder("out", "err", "again");
    }

    @Test
    void pauseAndResumeAreConfirmedByTheKernel() {
        try (ManagedProcess process = ManagedProcess.start("cat", List.of("cat"))) {
            process.pause(WAIT);
            assertThat(procState(process.pid())).isEqualTo('T');
            process.resume(WAIT);
            assertThat(procState(process.pid())).isNotEqualTo('T');
            assertThat(process.ask("after", WAIT)).isEqualTo("after");
        }
    }

    @Test
    void aListenerGetsEveryLineAndTheEnvironmentIsAdded() throws InterruptedException {
        List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ManagedProcess process = ManagedProcess.launch("env", List.of("sh", "-c", "echo \"$GREETING\"; cat"))
                .environment(java.util.Map.of("GREETING", "hello"))
                .onLine(heard::add)
                .start()) {
            process.send("echoed");
            process.closeInput();
            assertThat(process.awaitExit(WAIT)).isZero();
        }
        assertThat(heard).containsExactly("hello", "echoed");
    }

    @Test
    void aChildJvmCommandHasThisJvmsJavaClassPathAndTheOptionsAsked() {
        List<String> command = JavaCommand.of(ManagedProcessTest.class)
                .quickStart("64m")
                .args("a", "b")
                .toList();

        assertThat(command.get(0)).isEqualTo(JavaCommand.java().toString());
        assertThat(command)
                .contains("-Xmx64m", "-XX:TieredStopAtLevel=1")
                .endsWith("-cp", System.getProperty("java.class.path"), ManagedProcessTest.class.getName(), "a", "b");
        assertThatThrownBy(() -> JavaCommand.of(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("main class");
    }

    private static char procState(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
