package io.cerberus.cli;

import io.cerberus.check.console.Durations;
import io.cerberus.servers.JavaCommand;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One "service instance" of the demo: a child JVM running {@code cerberus demo-worker}, talked to
 * line by line over its standard streams. Its standard error goes straight to ours.
 */
final class DemoInstance implements AutoCloseable {
    private final String name;
    private final ManagedProcess process;

    private DemoInstance(String name, ManagedProcess process) {
        this.name = name;
        this.process = process;
    }

    /**
     * Starts a worker JVM with this JVM's class path.
     *
     * @param name the instance name
     * @param workerArgs the arguments after {@code demo-worker}
     * @param engineUri the engine the worker locks on
     * @return the running instance
     */
    static DemoInstance start(String name, List<String> workerArgs, String engineUri) {
        return new DemoInstance(name, startWorker("demo-worker", workerArgs, engineUri, "instance " + name, null));
    }

    /**
     * Starts {@code cerberus SUBCOMMAND ARGS} in a small, quick-starting child JVM with this JVM's
     * class path (workers wait on files, locks and servers; they compute little), its standard
     * error shown with ours. The engine URI goes in the worker's environment
     * ({@value EngineOptions#ENGINE_ENV}), never on its command line, where any local user could
     * read its credentials ({@code ps}).
     *
     * @param subcommand the hidden worker command
     * @param args its arguments
     * @param engineUri the engine URI
     * @param what what is started, for messages
     * @param onLine receives each line the worker prints, or null to read them with the line methods
     * @return the process
     * @throws CliFailure if it cannot be started
     */
    static ManagedProcess startWorker(
            String subcommand, List<String> args, String engineUri, String what, Consumer<String> onLine) {
        List<String> command = JavaCommand.of(CerberusCommand.class)
                .quickStart("128m")
                .args(subcommand)
                .args(args)
                .toList();
        ManagedProcess.Launch launch = ManagedProcess.launch(what, command)
                .environment(Map.of(EngineOptions.ENGINE_ENV, engineUri))
                .inheritStderr();
        try {
            return (onLine == null ? launch : launch.onLine(onLine)).start();
        } catch (ServerException e) {
            throw new CliFailure("cannot start " + what + ": " + e.getMessage(), e);
        }
    }

    String name() {
        return name;
    }

    /**
     * Waits for a line starting with {@code prefix}, skipping others.
     *
     * @param prefix the start of the line
     * @param timeout how long to wait
     * @return the rest of the line after the prefix
     * @throws CliFailure if the instance ends or the time runs out first
     */
    String awaitLine(String prefix, Duration timeout) {
        try {
            return process.awaitLine(prefix, timeout).substring(prefix.length());
        } catch (ServerException e) {
            throw new CliFailure(
                    process.isAlive()
                            ? "instance " + name + " printed no " + prefix.strip() + " within "
                                    + Durations.format(timeout)
                            : "instance " + name + " ended before printing " + prefix.strip(),
                    e);
        }
    }

    /**
     * Sends one line to the instance.
     *
     * @param line the line
     * @throws CliFailure if it has ended
     */
    void send(String line) {
        try {
            process.send(line);
        } catch (ServerException e) {
            throw new CliFailure("cannot talk to instance " + name + ": it has ended", e);
        }
    }

    /**
     * @param timeout how long to wait
     * @return whether the instance has ended within the timeout
     */
    boolean awaitExit(Duration timeout) {
        try {
            process.awaitExit(timeout);
            return true;
        } catch (ServerException e) {
            return false;
        }
    }

    /** Kills the instance if it still runs. */
    @Override
    public void close() {
        process.close();
    }
}
