package io.cerberus.cli;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.cerberus.servers.JavaCommand;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Runs {@code cerberus} in child JVMs, the way users run it; a usage error inside this JVM ({@link #usage}). */
final class Cli {
    /** How long a refusal may take inside this JVM ({@link #usage}). */
    private static final Duration USAGE_LIMIT = Duration.ofSeconds(20);

    private Cli() {}

    /** How a finished run ended. */
    record Result(int exitCode, String stdout, String stderr) {
        @Override
        public String toString() {
            return "exit code " + exitCode + "\n--- stdout:\n" + stdout + "--- stderr:\n" + stderr;
        }
    }

    /**
     * Runs the command to its end, with standard input closed and without {@code CERBERUS_ENGINE}
     * in its environment.
     *
     * @param timeout how long it may take (scaled here)
     * @param args the arguments of {@code cerberus}
     * @return how it ended
     */
    static Result run(Duration timeout, String... args) {
        return runWith(Map.of(), timeout, args);
    }

    /**
     * Runs the command inside this JVM, for arguments it refuses before it starts anything (a usage error): the
     * same parsing and checks as a child JVM's run, without a JVM's start-up per case. A run that is not refused
     * fails the test when it passes {@code USAGE_LIMIT} instead of running on in this JVM unnoticed.
     *
     * @param args the arguments of {@code cerberus}
     * @return how it ended
     */
    static Result usage(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = assertTimeoutPreemptively(
                USAGE_LIMIT,
                () -> CerberusCommand.run(new PrintWriter(out, true), new PrintWriter(err, true), args),
                () -> "cerberus " + String.join(" ", args) + " was not refused at once: it ran");
        return new Result(exitCode, out.toString(), err.toString());
    }

    /**
     * Like {@link #run}, with these variables in the command's environment.
     *
     * @param environment variables to set (after {@code CERBERUS_ENGINE} is removed)
     * @param timeout how long it may take (scaled here)
     * @param args the arguments of {@code cerberus}
     * @return how it ended
     */
    static Result runWith(Map<String, String> environment, Duration timeout, String... args) {
        Duration scaled = TestTimes.scaled(timeout);
        try (ManagedProcess process = ManagedProcess.launch("cerberus-" + args[0], javaCommand(args))
                .withoutEnvironment(EngineOptions.ENGINE_ENV)
                .environment(environment)
                .start()) {
            process.closeInput();
            try {
                process.awaitExit(scaled);
            } catch (ServerException e) {
                throw new AssertionError(
                        "cerberus " + String.join(" ", args) + " did not end within " + scaled.toMillis() + "ms"
                                + process.diagnostics(),
                        e);
            }
            String stdout = process.stdout().stream().map(line -> line + "\n").collect(Collectors.joining());
            return new Result(process.awaitExit(Duration.ZERO), stdout, process.stderr());
        }
    }

    /**
     * Like {@link #run}, with standard input, output and error on a pseudo-terminal (util-linux
     * {@code script}): what a user at a terminal sees. The result's standard output is every byte the
     * terminal showed (standard error included; line ends as {@code \r\n}); its standard error is empty.
     *
     * @param environment variables to set (after {@code CERBERUS_ENGINE} is removed)
     * @param timeout how long it may take (scaled here)
     * @param args the arguments of {@code cerberus}
     * @return how it ended
     */
    static Result runInTerminal(Map<String, String> environment, Duration timeout, String... args) {
        return runRaw(
                List.of("script", "-qfec", shellWords(javaCommand(args)), "/dev/null"),
                environment,
                timeout,
                true,
                args);
    }

    /**
     * Like {@link #run}, with standard output written to a file (as {@code cerberus ... > file}) and
     * standard error to another: the result holds both byte for byte, carriage returns included.
     *
     * @param environment variables to set (after {@code CERBERUS_ENGINE} is removed)
     * @param timeout how long it may take (scaled here)
     * @param args the arguments of {@code cerberus}
     * @return how it ended
     */
    static Result runToFile(Map<String, String> environment, Duration timeout, String... args) {
        return runRaw(
                List.of("sh", "-c", shellWords(javaCommand(args)) + " > \"$CERBERUS_TEST_STDOUT\""),
                environment,
                timeout,
                false,
                args);
    }

    private static Result runRaw(
            List<String> command, Map<String, String> environment, Duration timeout, boolean merged, String... args) {
        Duration scaled = TestTimes.scaled(timeout);
        Path stdout;
        try {
            stdout = Files.createTempFile("cerberus-" + args[0] + "-", ".stdout");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Map<String, String> variables = new java.util.HashMap<>(environment);
        variables.put("CERBERUS_TEST_STDOUT", stdout.toString());
        ManagedProcess.Launch launch = ManagedProcess.launch("cerberus-" + args[0], command)
                .withoutEnvironment(EngineOptions.ENGINE_ENV)
                .environment(variables);
        try (ManagedProcess process = (merged ? launch.output(stdout) : launch).start()) {
            process.closeInput();
            try {
                process.awaitExit(scaled);
            } catch (ServerException e) {
                throw new AssertionError(
                        "cerberus " + String.join(" ", args) + " did not end within " + scaled.toMillis() + "ms"
                                + process.diagnostics(),
                        e);
            }
            String out = Files.readString(stdout, StandardCharsets.UTF_8);
            return new Result(process.awaitExit(Duration.ZERO), out, merged ? "" : process.stderr());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            stdout.toFile().delete();
        }
    }

    /** @return the words quoted for {@code sh}, joined by spaces */
    private static String shellWords(List<String> words) {
        return words.stream()
                .map(word -> "'" + word.replace("'", "'\\''") + "'")
                .collect(Collectors.joining(" "));
    }

    /**
     * Starts the command and leaves it running; its standard output (and that of a command it
     * runs) is read line by line.
     *
     * @param args the arguments of {@code cerberus}
     * @return the running process
     */
    static ManagedProcess start(String... args) {
        return ManagedProcess.start("cerberus-" + args[0], javaCommand(args));
    }

    private static List<String> javaCommand(String... args) {
        return JavaCommand.of(CerberusCommand.class)
                .quickStart("256m")
                .args(args)
                .toList();
    }

    /**
     * @param pid a process id
     * @return whether that process runs (a zombie waiting to be reaped does not)
     */
    static boolean isRunning(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
    }

    /**
     * @param pid a process id
     * @return what {@code ps} shows of the process: its whole command line, arguments joined by spaces
     *     ({@link ProcessHandle.Info} cuts long ones short); empty once it has ended, or when it is not ours to read
     */
    static java.util.Optional<String> commandLine(long pid) {
        try {
            return java.util.Optional.of(new String(
                            Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")), StandardCharsets.UTF_8)
                    .replace('\0', ' '));
        } catch (IOException e) {
            return java.util.Optional.empty();
        }
    }
}
