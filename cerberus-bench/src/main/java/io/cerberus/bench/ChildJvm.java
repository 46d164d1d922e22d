package io.cerberus.bench;

import io.cerberus.servers.JavaCommand;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The child JVM of a {@code contended-2p} cell, running {@link ContendedWorker} with this JVM's java
 * and class path and no options but this one's warm-up bound (it is measured: full JIT). What it says on standard output is
 * awaited with a deadline; its standard error is kept and shown in failure messages. Any failure
 * destroys it. Closing it ends it: once it has given its result it may take a while to close its peer;
 * before that it is destroyed at once.
 */
final class ChildJvm implements AutoCloseable {
    /** How long a child that has given its result may take to close its peer and exit. */
    private static final Duration EXIT_DEADLINE = Duration.ofSeconds(30);

    private final String description;
    private final ManagedProcess process;
    private boolean answered;

    private ChildJvm(String description, ManagedProcess process) {
        this.description = description;
        this.process = process;
    }

    /**
     * Starts {@link ContendedWorker} in a child JVM.
     *
     * @param description what the child runs, for messages ("Cerberus on redis, 1 thread(s), cell redis-2p-1")
     * @param args the worker's arguments
     * @param environment variables to add to the child's environment (what must not be on its command line)
     * @throws IllegalStateException if the JVM cannot be started
     */
    static ChildJvm start(String description, List<String> args, Map<String, String> environment) {
        List<String> command = JavaCommand.of(ContendedWorker.class)
                .jvmOptions("-D" + Bench.MAX_WARM_ROUNDS_PROPERTY + "=" + Bench.MAX_WARM_ROUNDS)
                .args(args)
                .toList();
        try {
            return new ChildJvm(
                    description,
                    ManagedProcess.launch("contended-2p child", command)
                            .environment(environment)
                            .start());
        } catch (ServerException e) {
            throw new IllegalStateException(
                    "could not start the child JVM of contended-2p (" + description + "): " + e.getMessage(), e);
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
    String await(String word, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line;
            try {
                line = process.nextLine(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (ServerException e) {
                throw failure(
                        (process.isAlive()
                                ? "did not say " + word + " within " + timeout.toMillis() + " ms"
                                : "ended before saying " + word),
                        e);
            }
            if (line.startsWith("FAILED")) {
                throw failure(
                        "failed before saying " + word + ": "
                                + line.substring("FAILED".length()).strip(),
                        null);
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
            process.send(line);
        } catch (ServerException e) {
            throw failure("could not be told " + line, e);
        }
    }

    private IllegalStateException failure(String what, ServerException cause) {
        process.kill(Duration.ofSeconds(10));
        return new IllegalStateException(
                "contended-2p: the child JVM (pid " + process.pid() + ", " + description + ") " + what
                        + "; it was destroyed" + process.diagnostics(),
                cause);
    }

    @Override
    public void close() {
        process.closeInput();
        if (answered) {
            try {
                int exit = process.awaitExit(EXIT_DEADLINE);
                if (exit != 0) {
                    System.err.println("contended-2p: the child JVM (pid " + process.pid() + ", " + description
                            + ") exited with code " + exit + " after its result (closing its peer failed)"
                            + process.diagnostics());
                }
            } catch (ServerException e) {
                System.err.println("contended-2p: the child JVM (pid " + process.pid() + ", " + description
                        + ") did not end within " + EXIT_DEADLINE.toSeconds()
                        + " s of its result (closing its peer); destroying it");
            }
        }
        process.close();
    }
}
