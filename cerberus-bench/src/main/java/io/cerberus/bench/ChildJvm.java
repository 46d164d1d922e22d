package io.cerberus.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of a {@code contended-2p} cell, running {@link ContendedWorker} with this JVM's java
 * command and class path. Its standard output is read line by line, to wait for what it says with a
 * deadline; its standard error is forwarded to this JVM's as it comes, each line prefixed with the
 * child's pid, and its last lines are kept for failure messages. Any failure destroys it. Closing it
 * ends it: once it has given its result it may take a while to close its peer; before that it is
 * destroyed at once.
 */
final class ChildJvm implements AutoCloseable {
    private static final String EOF = "\u0000eof";
    private static final int STDERR_LINES_KEPT = 30;
    /** How long a child that has given its result may take to close its peer and exit. */
    private static final Duration EXIT_DEADLINE = Duration.ofSeconds(30);

    private final String description;
    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Deque<String> stderrTail = new ArrayDeque<>();
    private boolean answered;

    private ChildJvm(String description, Process process) {
        this.description = description;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        daemon("stdout-of-child-" + process.pid(), this::readStdout);
        daemon("stderr-of-child-" + process.pid(), this::forwardStderr);
    }

    /**
     * Starts {@link ContendedWorker} in a child JVM.
     *
     * @param description what the child runs, for messages ("Cerberus on redis, 1 thread(s), cell redis-2p-1")
     * @param args the worker's arguments
     * @param environment variables to add to the child's environment (what must not be on its command line)
     * @throws UncheckedIOException if the JVM cannot be started
     */
    static ChildJvm start(String description, List<String> args, Map<String, String> environment) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ContendedWorker.class.getName());
        command.addAll(args);
        try {
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().putAll(environment);
            return new ChildJvm(description, builder.start());
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the child JVM of contended-2p (" + description + "): " + command.get(0), e);
        }
    }

    private static void daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private void readStdout() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // the child ended; EOF tells the waiter
        } finally {
            lines.add(EOF);
        }
    }

    private void forwardStderr() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                System.err.println("[contended-2p child " + process.pid() + "] " + line);
                synchronized (stderrTail) {
                    if (stderrTail.size() == STDERR_LINES_KEPT) {
                        stderrTail.removeFirst();
                    }
                    stderrTail.addLast(line);
                }
            }
        } catch (IOException e) {
            // the child ended
        }
    }

    /**
     * Waits for the child to say a line starting with {@code word}; lines it should not have printed
     * are forwarded to standard error and skipped.
     *
     * @return the line
     * @throws IllegalStateException if the child says {@code FAILED}, ends, or does not say it within {@code timeout};
     *     the child is destroyed first
     */
    String await(String word, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw failure("did not say " + word + " within " + timeout.toMillis() + " ms");
            }
            if (line.equals(EOF)) {
                process.waitFor(5, TimeUnit.SECONDS);
                throw failure("ended before saying " + word + (process.isAlive() ? "" : ", with exit code " + process.exitValue()));
            }
            if (line.startsWith("FAILED")) {
                throw failure("failed before saying " + word + ": " + line.substring("FAILED".length()).strip());
            }
            if (line.startsWith(word)) {
                answered = word.equals("RESULT");
                return line;
            }
            System.err.println("[contended-2p child " + process.pid() + ", standard output] " + line);
        }
    }

    /** @return whether the child JVM is running */
    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Says one line to the child.
     *
     * @throws IllegalStateException if the child no longer reads (it is destroyed)
     */
    void send(String line) {
        try {
            stdin.write(line + "\n");
            stdin.flush();
        } catch (IOException e) {
            IllegalStateException failure = failure("could not be told " + line + " (" + e.getMessage() + ")");
            failure.addSuppressed(e);
            throw failure;
        }
    }

    private IllegalStateException failure(String what) {
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String tail;
        synchronized (stderrTail) {
            tail = stderrTail.isEmpty() ? " (its standard error was empty)"
                    : "; the end of its standard error:\n  " + String.join("\n  ", stderrTail);
        }
        return new IllegalStateException("contended-2p: the child JVM (pid " + process.pid() + ", " + description + ") " + what
                + "; it was destroyed" + tail);
    }

    @Override
    public void close() {
        try {
            stdin.close();
        } catch (IOException e) {
            // it has ended
        }
        try {
            if (answered && !process.waitFor(EXIT_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                System.err.println("contended-2p: the child JVM (pid " + process.pid() + ", " + description + ") did not end within "
                        + EXIT_DEADLINE.toSeconds() + " s of its result (closing its peer); destroying it");
            } else if (answered && process.exitValue() != 0) {
                System.err.println("contended-2p: the child JVM (pid " + process.pid() + ", " + description + ") exited with code "
                        + process.exitValue() + " after its result (closing its peer failed: see its standard error above)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
