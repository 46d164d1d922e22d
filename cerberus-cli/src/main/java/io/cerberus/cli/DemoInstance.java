package io.cerberus.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One "service instance" of the demo: a child JVM running {@code cerberus demo-worker}, talked to
 * line by line over its standard streams. Its standard error goes straight to ours.
 */
final class DemoInstance implements AutoCloseable {
    private static final String END_OF_OUTPUT = "\u0000end";

    private final String name;
    private final Process process;
    private final Writer input;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private DemoInstance(String name, Process process) {
        this.name = name;
        this.process = process;
        this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readOutput, "output-of-instance-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a worker JVM with this JVM's class path.
     *
     * @param name the instance name
     * @param workerArgs the arguments after {@code demo-worker}
     * @return the running instance
     */
    static DemoInstance start(String name, List<String> workerArgs, String engineUri) {
        return new DemoInstance(name, startWorker("demo-worker", workerArgs, engineUri, "instance " + name));
    }

    /**
     * Starts {@code cerberus SUBCOMMAND ARGS} in a small, quick-starting child JVM with this JVM's
     * class path (workers wait on files, locks and servers; they compute little), its standard
     * error shown with ours.
     *
     * @param subcommand the hidden worker command
     * @param args its arguments
     * @param what what is started, for the error message
     * @return the process
     */
    /**
     * Starts a worker JVM with this JVM's class path. The engine URI goes in the worker's
     * environment ({@value EngineOptions#ENGINE_ENV}), never on its command line, where any local
     * user could read its credentials ({@code ps}).
     */
    static Process startWorker(String subcommand, List<String> args, String engineUri, String what) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx128m",
                "-cp", System.getProperty("java.class.path"),
                CerberusCommand.class.getName(), subcommand));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put(EngineOptions.ENGINE_ENV, engineUri);
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + what + " (" + command.get(0) + ")", e);
        }
    }

    String name() {
        return name;
    }

    private void readOutput() {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // the process ended; END_OF_OUTPUT tells the waiting side
        } finally {
            lines.add(END_OF_OUTPUT);
        }
    }

    /**
     * Waits for a line starting with {@code prefix}, skipping others.
     *
     * @param prefix the start of the line
     * @param timeout how long to wait
     * @return the rest of the line after the prefix
     * @throws CliFailure if the instance ends or the time runs out first
     * @throws InterruptedException if interrupted
     */
    String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new CliFailure("instance " + name + " printed no " + prefix.strip() + " within " + Durations.format(timeout));
            }
            if (line.equals(END_OF_OUTPUT)) {
                lines.add(END_OF_OUTPUT);
                process.waitFor(5, TimeUnit.SECONDS);
                throw new CliFailure("instance " + name + " ended before printing " + prefix.strip()
                        + (process.isAlive() ? "" : " (exit code " + process.exitValue() + ")"));
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length());
            }
        }
    }

    /**
     * Sends one line to the instance.
     *
     * @param line the line
     */
    void send(String line) {
        try {
            input.write(line + "\n");
            input.flush();
        } catch (IOException e) {
            throw new CliFailure("cannot talk to instance " + name + ": it has ended", e);
        }
    }

    /**
     * @param timeout how long to wait
     * @return whether the instance has ended within the timeout
     * @throws InterruptedException if interrupted
     */
    boolean awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Kills the instance if it still runs. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
