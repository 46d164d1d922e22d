package io.cerberus.cli;

import io.cerberus.servers.FreePorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One server process the safety checker runs (a ZooKeeper server, an etcd member, memcached): started
 * with its output appended to a file, killed with SIGKILL and confirmed gone (exited, client port
 * refusing), started again with the same command and data. Not thread-safe: the checker's fault
 * loop is its only user.
 */
final class ServerProcess implements AutoCloseable {
    private final String name;
    private final List<String> command;
    private final Path output;
    private final int clientPort;
    private Process process;

    /**
     * @param name the member's name in messages, e.g. {@code zookeeper member 2}
     * @param command the command that starts it (again)
     * @param output the file its standard output and error are appended to
     * @param clientPort the port it serves clients on, used to confirm a kill
     */
    ServerProcess(String name, List<String> command, Path output, int clientPort) {
        this.name = name;
        this.command = List.copyOf(command);
        this.output = output;
        this.clientPort = clientPort;
    }

    /** Starts the process; it may not serve yet (see {@link #await}). */
    void start() {
        try {
            process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                    .redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + String.join(" ", command), e);
        }
    }

    /**
     * Waits until {@code condition} holds.
     *
     * @throws IllegalStateException if the process exits first or {@code within} passes, naming its output file
     */
    void await(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        long pause = 1;
        while (!condition.getAsBoolean()) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited (code " + process.exitValue() + ") before " + what + "; see " + output);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(name + ": no " + what + " within " + Durations.format(within) + "; see " + output);
            }
            Thread.sleep(pause);
            pause = Math.min(pause * 2, 50);
        }
    }

    /**
     * Kills the process with SIGKILL and waits until it has exited and its client port refuses connections.
     *
     * @throws IllegalStateException if either does not happen within 10 s
     */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") did not die of SIGKILL");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (FreePorts.accepts(clientPort)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(name + " was killed but port " + clientPort + " still accepts connections");
            }
            Thread.sleep(10);
        }
    }

    String name() {
        return name;
    }

    int clientPort() {
        return clientPort;
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    @Override
    public void close() {
        if (process != null) {
            process.destroyForcibly();
        }
    }
}
