package io.cerberus.cli;

import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs {@code cerberus} in child JVMs, the way users run it. */
final class Cli {
    private Cli() {
    }

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
     * Like {@link #run}, with these variables in the command's environment.
     *
     * @param environment variables to set (after {@code CERBERUS_ENGINE} is removed)
     * @param timeout how long it may take (scaled here)
     * @param args the arguments of {@code cerberus}
     * @return how it ended
     */
    static Result runWith(Map<String, String> environment, Duration timeout, String... args) {
        Duration scaled = TestTimes.scaled(timeout);
        try {
            Path out = Files.createTempFile("cerberus-cli-", ".out");
            Path err = Files.createTempFile("cerberus-cli-", ".err");
            try {
                ProcessBuilder builder = new ProcessBuilder(javaCommand(args))
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile());
                builder.environment().remove(EngineOptions.ENGINE_ENV);
                builder.environment().putAll(environment);
                Process process = builder.start();
                process.getOutputStream().close();
                if (!process.waitFor(scaled.toNanos(), TimeUnit.NANOSECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                    throw new AssertionError("cerberus " + String.join(" ", args) + " did not end within " + scaled.toMillis()
                            + "ms\n" + new Result(-1, Files.readString(out), Files.readString(err)));
                }
                return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                        Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
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
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"),
                CerberusCommand.class.getName()));
        command.addAll(List.of(args));
        return command;
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
}
