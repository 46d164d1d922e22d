package io.cerberus.servers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process: a real server, or a child JVM holding a lock. Its standard output is read line
 * by line by a daemon thread into a queue, so the caller synchronises on what it prints, always
 * with a deadline ({@link #awaitLine}, {@link #nextLine}, {@link #ask}); its standard error goes to
 * a temporary file, shown with the lines read so far in every failure message
 * ({@link #diagnostics()}). Signals are sent with {@code kill}, so a caller can pause
 * ({@code SIGSTOP}), resume ({@code SIGCONT}) and kill it. Closing kills it (continuing it first if
 * it was stopped), waits for it, and deletes the file. Every failure is a {@link ServerException}.
 * One reader of the output at a time: the line methods are not meant for concurrent callers.
 */
public final class ManagedProcess implements AutoCloseable {
    /** The variable a child JVM finds its engine URI in. */
    public static final String ENGINE_ENV = "CERBERUS_ENGINE";
    /** The variable a child JVM of two engines finds its second engine URI in. */
    public static final String SECOND_ENGINE_ENV = "CERBERUS_SECOND_ENGINE";
    private static final String EOF = "\u0000eof";

    private final String name;
    private final Process process;
    private final Path stderrLog;
    /** Whether {@link #stderrLog} is this object's temporary file, deleted on close, or the caller's output file. */
    private final boolean temporaryLog;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();
    private final Writer stdin;
    private final Thread reader;

    private ManagedProcess(String name, Process process, Path stderrLog, boolean temporaryLog) {
        this.name = name;
        this.process = process;
        this.stderrLog = stderrLog;
        this.temporaryLog = temporaryLog;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.reader = new Thread(this::pump, "stdout-of-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a process.
     *
     * @param name a short name for messages and the log file
     * @param command the command and its arguments
     * @return the running process
     * @throws ServerException if it cannot be started
     */
    public static ManagedProcess start(String name, List<String> command) {
        return start(name, command, Map.of());
    }

    private static ManagedProcess start(String name, List<String> command, Map<String, String> environment) {
        Path log = null;
        try {
            log = Files.createTempFile("cerberus-" + name.replaceAll("[^A-Za-z0-9_-]", "_") + "-", ".stderr.log");
            ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            return new ManagedProcess(name, process, log, true);
        } catch (IOException e) {
            if (log != null) {
                log.toFile().delete();
            }
            throw new ServerException("could not start " + name + ": " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Runs a short command to its end, such as a server's own client tool ({@code etcdctl}).
     *
     * @param name a short name for messages
     * @param command the command and its arguments; its standard input is closed at once
     * @param timeout how long it may run; it is killed after that
     * @return its standard output, each line ended by a line break
     * @throws ServerException if it cannot be started, does not end in time, or ends with an exit
     *     code other than 0 (with its output and standard error)
     */
    public static String run(String name, List<String> command, Duration timeout) {
        try (ManagedProcess process = start(name, command)) {
            try {
                process.stdin.close();
            } catch (IOException e) {
                // it ended already: its exit code tells
            }
            int exitCode = process.awaitExit(timeout);
            try {
                process.reader.join(timeout.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServerException("interrupted reading the output of " + name, e);
            }
            if (exitCode != 0) {
                throw new ServerException(name + " failed (exit code " + exitCode + "): " + String.join(" ", command) + process.diagnostics());
            }
            StringBuilder stdout = new StringBuilder();
            process.lines.stream().filter(line -> !line.equals(EOF)).forEach(line -> stdout.append(line).append('\n'));
            return stdout.toString();
        }
    }

    /**
     * Starts a process whose standard output and error are both appended to a file the caller
     * keeps (it is not deleted on close): for a server whose output a user reads afterwards, as
     * {@code cerberus check} does. The line methods then see only the end of the output; failure
     * messages show the end of the file.
     *
     * @param name a short name for messages
     * @param command the command and its arguments
     * @param output the file to append to; its directory must exist
     * @return the running process
     * @throws ServerException if it cannot be started
     */
    public static ManagedProcess startWithOutput(String name, List<String> command, Path output) {
        try {
            Process process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                    .redirectErrorStream(true).start();
            return new ManagedProcess(name, process, output, false);
        } catch (IOException e) {
            throw new ServerException("could not start " + name + ": " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Starts a class's {@code main} in a child JVM with this JVM's class path.
     *
     * @param mainClass the class
     * @param args its arguments
     * @return the running child
     */
    public static ManagedProcess startJava(Class<?> mainClass, String... args) {
        return start(mainClass.getSimpleName(), javaCommand(mainClass, args), Map.of());
    }

    /**
     * Like {@link #startJava(Class, String...)}, with an engine URI handed over in the child's
     * environment ({@value #ENGINE_ENV}, read with {@link #engineUri()}), never on its command
     * line, where any local user could read its password.
     *
     * @param mainClass the class
     * @param engineUri the engine URI
     * @param args its other arguments
     * @return the running child
     */
    public static ManagedProcess startJavaWithEngine(Class<?> mainClass, String engineUri, String... args) {
        return start(mainClass.getSimpleName(), javaCommand(mainClass, args), Map.of(ENGINE_ENV, engineUri));
    }

    /**
     * Like {@link #startJavaWithEngine}, with two engine URIs, both in the child's environment
     * ({@value #ENGINE_ENV} and {@value #SECOND_ENGINE_ENV}, read with {@link #engineUri()} and
     * {@link #secondEngineUri()}).
     *
     * @param mainClass the class
     * @param engineUri the first engine URI
     * @param secondEngineUri the second engine URI
     * @param args its other arguments
     * @return the running child
     */
    public static ManagedProcess startJavaWithEngines(Class<?> mainClass, String engineUri, String secondEngineUri, String... args) {
        return start(mainClass.getSimpleName(), javaCommand(mainClass, args),
                Map.of(ENGINE_ENV, engineUri, SECOND_ENGINE_ENV, secondEngineUri));
    }

    /** @return in a child started by {@link #startJavaWithEngine}, the engine URI it was given */
    public static String engineUri() {
        return fromEnvironment(ENGINE_ENV, "startJavaWithEngine");
    }

    /** @return in a child started by {@link #startJavaWithEngines}, the second engine URI it was given */
    public static String secondEngineUri() {
        return fromEnvironment(SECOND_ENGINE_ENV, "startJavaWithEngines");
    }

    private static String fromEnvironment(String variable, String starter) {
        String uri = System.getenv(variable);
        if (uri == null || uri.isEmpty()) {
            throw new ServerException(variable + " is not set: start this class with ManagedProcess." + starter);
        }
        return uri;
    }

    private static List<String> javaCommand(Class<?> mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx128m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-Xshare:auto");
        command.add("-D" + Timeouts.SCALE_PROPERTY + "=" + Timeouts.scale());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        return command;
    }

    private void pump() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // the process ended; EOF below tells the readers
        } finally {
            lines.add(EOF);
        }
    }

    /** @return the short name given at start, as in messages */
    public String name() {
        return name;
    }

    /** @return the operating-system process id */
    public long pid() {
        return process.pid();
    }

    /** @return whether the process is running */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Waits for a line of standard output that starts with {@code prefix}; earlier lines are
     * skipped (and kept for messages).
     *
     * @param prefix the start of the awaited line
     * @param timeout the deadline
     * @return the whole line
     * @throws ServerException if the deadline passes or the process ends first
     */
    public String awaitLine(String prefix, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = Math.max(0, deadline - System.nanoTime());
            String line;
            try {
                line = nextLine(Duration.ofNanos(left));
            } catch (ServerException e) {
                throw new ServerException("waiting for a line starting with '" + prefix + "': " + e.getMessage(), e);
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /**
     * Waits for the next line of standard output.
     *
     * @param timeout the deadline
     * @return the line
     * @throws ServerException if the deadline passes or the process ends first
     */
    public String nextLine(Duration timeout) {
        try {
            String line = lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new ServerException(name + " printed nothing within " + timeout.toMillis() + "ms" + diagnostics());
            }
            if (line.equals(EOF)) {
                lines.add(EOF);
                throw new ServerException(name + " ended" + exitCode() + diagnostics());
            }
            seen.add(line);
            return line;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServerException("interrupted waiting for " + name, e);
        }
    }

    /**
     * Sends a command line and returns the next line printed: for children that answer each
     * command with one line, such as the testkit's client process.
     *
     * @param command the command line
     * @param timeout the deadline for the answer
     * @return the answer
     * @throws ServerException if it cannot be sent, or no answer comes within the deadline
     */
    public String ask(String command, Duration timeout) {
        send(command);
        return nextLine(timeout);
    }

    /**
     * Sends one line to the process's standard input.
     *
     * @param line the line, without the line break
     * @throws ServerException if the process no longer reads its input
     */
    public void send(String line) {
        try {
            stdin.write(line + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new ServerException("could not write to " + name + exitCode() + diagnostics(), e);
        }
    }

    /**
     * Sends a signal with {@code kill}.
     *
     * @param signal the signal name without {@code SIG}: {@code STOP}, {@code CONT}, {@code KILL}, {@code TERM}
     * @throws ServerException if {@code kill} fails, say because the process has ended
     */
    public void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new ServerException("kill -" + signal + " " + pid() + " (" + name + ") failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
            }
        } catch (IOException e) {
            throw new ServerException("could not run kill to send SIG" + signal + " to " + name
                    + "; install it with: apt-get install -y procps", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServerException("interrupted sending SIG" + signal + " to " + name, e);
        }
    }

    /**
     * Kills the process with SIGKILL and waits until it is gone.
     *
     * @param timeout how long to wait for it to disappear
     * @throws ServerException if it is still there after {@code timeout}
     */
    public void kill(Duration timeout) {
        process.destroyForcibly();
        awaitExit(timeout);
    }

    /**
     * Waits for the process to end.
     *
     * @param timeout the deadline
     * @return its exit code
     * @throws ServerException if it is still running after {@code timeout}
     */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new ServerException(name + " did not end within " + timeout.toMillis() + "ms" + diagnostics());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServerException("interrupted waiting for " + name + " to end", e);
        }
    }

    /**
     * @return everything the process wrote to standard error so far (with {@link #startWithOutput},
     *     everything in its output file)
     * @throws ServerException if its file cannot be read
     */
    public String stderr() {
        try {
            return Files.readString(stderrLog, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ServerException("could not read the standard error of " + name + " in " + stderrLog + ": " + e, e);
        }
    }

    /** @return {@code " (exit code N)"} once the process has ended, else nothing */
    private String exitCode() {
        return process.isAlive() ? "" : " (exit code " + process.exitValue() + ")";
    }

    /**
     * @return the standard output so far (the lines read and those not read yet) and the standard
     *     error, for failure messages
     */
    public String diagnostics() {
        if (!process.isAlive()) {
            try {
                reader.join(1000); // an ended process's last lines, often the reason it ended
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        List<String> stdout = new ArrayList<>(seen);
        lines.stream().filter(line -> !line.equals(EOF)).forEach(stdout::add);
        if (stdout.size() > 50) {
            stdout = new ArrayList<>(stdout.subList(stdout.size() - 50, stdout.size()));
            stdout.add(0, "...");
        }
        String stderr;
        try {
            stderr = stderr();
        } catch (ServerException e) {
            stderr = "(unreadable: " + e.getCause() + ")";
        }
        if (stderr.length() > 4000) {
            stderr = "..." + stderr.substring(stderr.length() - 4000);
        }
        return temporaryLog
                ? "\n  stdout so far: " + stdout + "\n  stderr (" + stderrLog + "):\n" + stderr
                : "\n  output (" + stderrLog + "):\n" + stderr;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            // a stopped process must be continued to die; it may also have ended since the check
            try {
                signal("CONT");
            } catch (ServerException ended) {
                // nothing to continue
            }
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (temporaryLog) {
            try {
                Files.deleteIfExists(stderrLog);
            } catch (IOException e) {
                // a temp file; the OS cleans it up
            }
        }
    }
}
