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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A child process: a real server, or a child JVM holding a lock. Its standard output is read line
 * by line by a daemon thread into a queue, so the caller synchronises on what it prints, always
 * with a deadline ({@link #awaitLine}, {@link #nextLine}, {@link #ask}); its standard error goes to
 * a temporary file, shown with the lines read so far in every failure message
 * ({@link #diagnostics()}). Signals are sent with a shell's {@code kill}, so a caller can pause
 * ({@code SIGSTOP}), resume ({@code SIGCONT}) and kill it, with the processes it started (a
 * forking server's children). Closing kills them all (SIGKILL ends a stopped process too), waits
 * for it, and deletes the file. Every failure is a {@link ServerException}.
 * {@link #launch} chooses otherwise: an output file the caller keeps, standard error shown with
 * this JVM's, each output line handed to a listener instead of the queue, added environment. One
 * reader of the output at a time: the line methods are not meant for concurrent callers.
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
    private final Consumer<String> listener;
    private final Thread reader;

    private ManagedProcess(
            String name, Process process, Path stderrLog, boolean temporaryLog, Consumer<String> listener) {
        this.name = name;
        this.process = process;
        this.stderrLog = stderrLog;
        this.temporaryLog = temporaryLog;
        this.listener = listener;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.reader = new Thread(this::pump, "stdout-of-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a process: standard output read line by line, standard error into a temporary file.
     *
     * @param name a short name for messages and the log file
     * @param command the command and its arguments
     * @return the running process
     * @throws ServerException if it cannot be started
     */
    public static ManagedProcess start(String name, List<String> command) {
        return launch(name, command).start();
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
        return run(name, command, Map.of(), "", timeout);
    }

    /**
     * Like {@link #run(String, List, Duration)}, with variables added to the command's environment
     * (a client's password, which on its command line any local user could read) and text on its
     * standard input (a set-up script).
     *
     * @param name a short name for messages
     * @param command the command and its arguments
     * @param environment variables added to this JVM's
     * @param input what it reads on its standard input, which is closed after it
     * @param timeout how long it may run; it is killed after that
     * @return its standard output, each line ended by a line break
     * @throws ServerException if it cannot be started, does not end in time, or ends with an exit
     *     code other than 0 (with its output and standard error)
     */
    public static String run(
            String name, List<String> command, Map<String, String> environment, String input, Duration timeout) {
        try (ManagedProcess process =
                launch(name, command).environment(environment).start()) {
            try (Writer in = process.stdin) {
                in.write(input);
            } catch (IOException e) {
                // it ended already, or stopped reading: its exit code tells
            }
            int exitCode = process.awaitExit(timeout);
            try {
                process.reader.join(timeout.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServerException("interrupted reading the output of " + name, e);
            }
            if (exitCode != 0) {
                throw new ServerException(name + " failed (exit code " + exitCode + "): " + String.join(" ", command)
                        + process.diagnostics());
            }
            StringBuilder stdout = new StringBuilder();
            process.lines.stream()
                    .filter(line -> !line.equals(EOF))
                    .forEach(line -> stdout.append(line).append('\n'));
            return stdout.toString();
        }
    }

    /**
     * Starts a process whose standard output and error are both appended to a file the caller
     * keeps: {@code launch(name, command).output(output).start()}.
     *
     * @param name a short name for messages
     * @param command the command and its arguments
     * @param output the file to append to; its directory must exist
     * @return the running process
     * @throws ServerException if it cannot be started
     */
    public static ManagedProcess startWithOutput(String name, List<String> command, Path output) {
        return launch(name, command).output(output).start();
    }

    /**
     * @param name a short name for messages and the log file
     * @param command the command and its arguments
     * @return the choices of how to start it, to be ended with {@link Launch#start()}
     */
    public static Launch launch(String name, List<String> command) {
        return new Launch(name, command);
    }

    /**
     * Starts a class's {@code main} in a small child JVM with this JVM's class path and time scale.
     *
     * @param mainClass the class
     * @param args its arguments
     * @return the running child
     */
    public static ManagedProcess startJava(Class<?> mainClass, String... args) {
        return start(mainClass.getSimpleName(), childJvm(mainClass, args));
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
        return launch(mainClass.getSimpleName(), childJvm(mainClass, args))
                .environment(Map.of(ENGINE_ENV, engineUri))
                .start();
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
    public static ManagedProcess startJavaWithEngines(
            Class<?> mainClass, String engineUri, String secondEngineUri, String... args) {
        return launch(mainClass.getSimpleName(), childJvm(mainClass, args))
                .environment(Map.of(ENGINE_ENV, engineUri, SECOND_ENGINE_ENV, secondEngineUri))
                .start();
    }

    private static List<String> childJvm(Class<?> mainClass, String... args) {
        return JavaCommand.of(mainClass)
                .quickStart("128m")
                .timeScale()
                .args(args)
                .toList();
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

    private void pump() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (listener == null) {
                    lines.add(line);
                } else {
                    listener.accept(line);
                }
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
                throw new ServerException(
                        name + " printed nothing within " + timeout.toMillis() + "ms" + diagnostics());
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
     * Sends a signal with the shell's builtin {@code kill} (no process started per signal, see {@link Signals}).
     *
     * @param signal the signal name without {@code SIG}: {@code STOP}, {@code CONT}, {@code KILL}, {@code TERM}
     * @throws ServerException if {@code kill} fails, say because the process has ended
     */
    public void signal(String signal) {
        signal(signal, pid());
    }

    private void signal(String signal, long pid) {
        Signals.send(signal, pid, name);
    }

    /**
     * Stops the process and the processes it started (SIGSTOP) and waits until the kernel shows
     * it stopped: from then on none of them runs an instruction until {@link #resume}.
     *
     * @param confirmWithin how long the kernel may take to show it stopped
     * @throws ServerException if the signal cannot be sent or the stop is not seen in time
     */
    public void pause(Duration confirmWithin) {
        signal("STOP"); // first: the aim is the process as it is now, and once stopped it starts no child
        signalEach("STOP", process.descendants().toList());
        Await.until(
                name + " (pid " + pid() + ") to show as stopped after SIGSTOP",
                confirmWithin,
                () -> state(pid()) == 'T');
    }

    /**
     * Continues a stopped process and the processes it started (SIGCONT) and waits until the
     * kernel no longer shows it stopped.
     *
     * @param confirmWithin how long the kernel may take
     * @throws ServerException if the signal cannot be sent or it still shows stopped after that
     */
    public void resume(Duration confirmWithin) {
        signal("CONT");
        signalEach("CONT", process.descendants().toList());
        Await.until(name + " (pid " + pid() + ") to run again after SIGCONT", confirmWithin, () -> state(pid()) != 'T');
    }

    /** Sends a signal to children, some of which may have ended meanwhile (a backend may end at any time). */
    private void signalEach(String signal, List<ProcessHandle> children) {
        for (ProcessHandle child : children) {
            try {
                signal(signal, child.pid());
            } catch (ServerException ended) {
                // it has ended
            }
        }
    }

    /** @return the state letter of {@code /proc/PID/stat} ('T' when stopped, 'Z' when ended but not reaped), or '?' when it cannot be read */
    private static char state(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException | RuntimeException e) {
            return '?';
        }
    }

    /** Closes the process's standard input: a child that reads commands sees the end and may exit. */
    public void closeInput() {
        try {
            stdin.close();
        } catch (IOException e) {
            // it has ended
        }
    }

    /**
     * Kills the process and every process it started with SIGKILL and waits until all are gone:
     * a forking server's children (PostgreSQL's backends, which hold its port and shared memory)
     * are gone too when this returns, so the server can start again at once. The process is
     * stopped first, so that it starts no child between the listing and the kill.
     *
     * @param timeout how long to wait for them to disappear
     * @throws ServerException if one is still there after {@code timeout}
     */
    public void kill(Duration timeout) {
        List<ProcessHandle> children = stopAndListChildren();
        process.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        awaitExit(timeout);
        Await.until(
                name + "'s " + children.size() + " child processes to end",
                timeout,
                () -> children.stream().allMatch(ManagedProcess::ended));
    }

    /**
     * @return whether the process has ended; a zombie has (its new parent, often a container's
     *     init, may reap it much later, and {@link ProcessHandle#isAlive()} counts it until then)
     */
    private static boolean ended(ProcessHandle handle) {
        if (!handle.isAlive()) {
            return true;
        }
        char state = state(handle.pid());
        return state == 'Z' || state == '?';
    }

    /** @return the children of the process, which is stopped (SIGSTOP) unless it has ended */
    private List<ProcessHandle> stopAndListChildren() {
        if (process.isAlive()) {
            try {
                signal("STOP");
            } catch (ServerException ended) {
                // it ended since the check: its children are listed all the same
            }
        }
        return process.descendants().toList();
    }

    /**
     * Waits for the process to end and its standard output to be read to the end.
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
            reader.join(1000); // its last lines reach the queue or the listener before this returns
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
        if (stderrLog == null) {
            return "(shown with this JVM's standard error)";
        }
        try {
            return Files.readString(stderrLog, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ServerException(
                    "could not read the standard error of " + name + " in " + stderrLog + ": " + e, e);
        }
    }

    /** @return {@code " (exit code N)"} once the process has ended, else nothing */
    private String exitCode() {
        return process.isAlive() ? "" : " (exit code " + process.exitValue() + ")";
    }

    /**
     * @return every line of standard output so far, those the line methods returned and those not
     *     read yet; after {@link #awaitExit}, the whole output
     */
    public List<String> stdout() {
        List<String> stdout = new ArrayList<>(seen);
        lines.stream().filter(line -> !line.equals(EOF)).forEach(stdout::add);
        return stdout;
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
        List<String> stdout = new ArrayList<>(stdout());
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
        if (stderrLog == null) {
            return "\n  stdout so far: " + stdout + "\n  stderr: " + stderr;
        }
        return temporaryLog
                ? "\n  stdout so far: " + stdout + "\n  stderr (" + stderrLog + "):\n" + stderr
                : "\n  output (" + stderrLog + "):\n" + stderr;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            List<ProcessHandle> children = stopAndListChildren();
            process.destroyForcibly();
            children.forEach(ProcessHandle::destroyForcibly);
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (temporaryLog && stderrLog != null) {
            try {
                Files.deleteIfExists(stderrLog);
            } catch (IOException e) {
                // a temp file; the OS cleans it up
            }
        }
    }

    /** How to start a process, from {@link #launch}; the defaults are those of {@link #start}. Not thread-safe. */
    public static final class Launch {
        private final String name;
        private final List<String> command;
        private final Map<String, String> environment = new HashMap<>();
        private final List<String> removed = new ArrayList<>();
        private Path output;
        private boolean inheritStderr;
        private Consumer<String> listener;

        private Launch(String name, List<String> command) {
            if (command.isEmpty()) {
                throw new IllegalArgumentException("a process needs a command, " + name + " has none");
            }
            this.name = name;
            this.command = List.copyOf(command);
        }

        /**
         * @param variables variables added to the environment it inherits from this JVM, for what must
         *     not be on its command line (where any local user can read it)
         * @return this launch
         */
        public Launch environment(Map<String, String> variables) {
            environment.putAll(variables);
            return this;
        }

        /**
         * @param variables variables removed from the environment it inherits from this JVM
         * @return this launch
         */
        public Launch withoutEnvironment(String... variables) {
            removed.addAll(List.of(variables));
            return this;
        }

        /**
         * @param output a file its standard output and error are both appended to, kept after close
         *     (its directory must exist); the line methods then see nothing, and failure messages
         *     show the end of the file
         * @return this launch
         */
        public Launch output(Path output) {
            this.output = output;
            return this;
        }

        /** @return this launch, with the process's standard error written straight to this JVM's */
        public Launch inheritStderr() {
            this.inheritStderr = true;
            return this;
        }

        /**
         * @param listener receives each line of standard output, on the reading thread, instead of
         *     the queue the line methods read
         * @return this launch
         */
        public Launch onLine(Consumer<String> listener) {
            this.listener = listener;
            return this;
        }

        /**
         * @return the running process
         * @throws ServerException if it cannot be started
         */
        public ManagedProcess start() {
            Path log = null;
            boolean temporary = false;
            try {
                ProcessBuilder builder = new ProcessBuilder(command);
                builder.environment().keySet().removeAll(removed);
                builder.environment().putAll(environment);
                if (output != null) {
                    builder.redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                            .redirectErrorStream(true);
                    log = output;
                } else if (inheritStderr) {
                    builder.redirectError(ProcessBuilder.Redirect.INHERIT);
                } else {
                    log = Files.createTempFile(
                            "cerberus-" + name.replaceAll("[^A-Za-z0-9_-]", "_") + "-", ".stderr.log");
                    temporary = true;
                    builder.redirectError(log.toFile());
                }
                return new ManagedProcess(name, builder.start(), log, temporary, listener);
            } catch (IOException e) {
                if (temporary) {
                    log.toFile().delete();
                }
                throw new ServerException(
                        "could not start " + name + ": " + String.join(" ", command) + ": " + e.getMessage(), e);
            }
        }
    }
}
