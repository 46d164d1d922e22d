package io.cerberus.check.run;

import io.cerberus.Cerberus;
import io.cerberus.CerberusBuilder;
import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.check.console.ConsoleLogging;
import io.cerberus.servers.JavaCommand;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.ServerException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client JVMs of a check: {@link #start} launches one with this JVM's class path (the packaged
 * {@code cerberus.jar}, or a test's class path), and {@link #main} is what runs in it, the hidden
 * command {@code check-worker} ({@link CheckWorkerCommand}) or {@code check-idempotency-worker}
 * ({@link IdempotencyWorkerCommand}). The engine URI reaches a worker in its environment
 * ({@value #ENGINE_ENV}), never on its command line, where any local user could read its
 * credentials ({@code ps}). A worker's errors print and exit as the {@code cerberus} command's do:
 * {@code cerberus check-worker: <what went wrong>}, on standard error, which the checker shows.
 */
@Command(
        name = "cerberus",
        subcommands = {CheckWorkerCommand.class, IdempotencyWorkerCommand.class})
public final class Workers {
    /** The environment variable that names the engine of a worker. */
    static final String ENGINE_ENV = "CERBERUS_ENGINE";

    /** Where a check worker's registers are, when not in files: a {@code jdbc:} URL or a {@code redis://} URI. */
    static final String REGISTER_ENV = "CERBERUS_CHECK_REGISTER";

    /** The engine a check worker switches to and back ({@code --second-engine}), when there is one. */
    static final String SECOND_ENGINE_ENV = "CERBERUS_CHECK_SECOND_ENGINE";

    private static final int USAGE = 64;
    private static final int INTERNAL_ERROR = 70;

    private Workers() {}

    /**
     * Runs a worker command and exits with its exit code.
     *
     * @param args the worker command's name and its arguments
     */
    public static void main(String[] args) {
        // the class path holds several engines' clients: as in the cerberus command, no native transport
        if (System.getProperty("io.netty.transport.noNative") == null) {
            System.setProperty("io.netty.transport.noNative", "true");
        }
        ConsoleLogging.configure();
        CommandLine commandLine = new CommandLine(new Workers());
        commandLine.setParameterExceptionHandler((e, given) -> failed(e.getCommandLine(), USAGE, e.getMessage()));
        commandLine.setExecutionExceptionHandler((e, failed, parsed) -> {
            int code = exitCode(e);
            String message = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
            return failed(
                    failed, code, code == INTERNAL_ERROR ? e.getClass().getSimpleName() + ": " + message : message);
        });
        System.exit(commandLine.execute(args));
    }

    /** @return the exit code of the {@code cerberus} command for this failure (see its {@code ExitCodes}) */
    private static int exitCode(Exception e) {
        if (e instanceof IllegalArgumentException || e instanceof UnsupportedCapabilityException) {
            return USAGE;
        }
        if (e instanceof EngineUnavailableException) {
            return 69;
        }
        return e instanceof UnsafeEngineException ? 78 : INTERNAL_ERROR;
    }

    private static int failed(CommandLine failed, int code, String message) {
        PrintWriter err = failed.getErr();
        err.println(failed.getCommandSpec().qualifiedName() + ": " + message);
        err.flush();
        return code;
    }

    /**
     * Starts {@code WORKER ARGS} in a small, quick-starting child JVM (workers wait on files,
     * locks and servers; they compute little), its standard error shown with ours.
     *
     * @param worker the worker command
     * @param args its arguments
     * @param environment the engine URI ({@value #ENGINE_ENV}), and the register store's ({@value #REGISTER_ENV}) if any
     * @param what what is started, for messages
     * @param onLine receives each line the worker prints
     * @return the process
     * @throws IllegalStateException if it cannot be started
     */
    static ManagedProcess start(
            String worker, List<String> args, Map<String, String> environment, String what, Consumer<String> onLine) {
        List<String> command = JavaCommand.of(Workers.class)
                .quickStart("128m")
                .args(worker)
                .args(args)
                .toList();
        try {
            return ManagedProcess.launch(what, command)
                    .environment(environment)
                    .inheritStderr()
                    .onLine(onLine)
                    .start();
        } catch (ServerException e) {
            throw new IllegalStateException("cannot start " + what + ": " + e.getMessage(), e);
        }
    }

    /** A worker's engine: the URI from {@value #ENGINE_ENV}, the namespace from {@code --namespace}. */
    static final class EngineOption {
        @Option(
                names = "--namespace",
                paramLabel = "NS",
                defaultValue = CerberusBuilder.DEFAULT_NAMESPACE,
                description = "Namespace of the lock names.")
        private String namespace;

        /** @return the engine URI the checker gave */
        String engineUri() {
            String uri = System.getenv(ENGINE_ENV);
            if (uri == null || uri.isBlank()) {
                throw new IllegalArgumentException(
                        "a check worker gets its engine in " + ENGINE_ENV + "; it is not set");
            }
            return uri.strip();
        }

        String namespace() {
            return namespace;
        }

        /** @return a client of the engine with this default lease */
        Cerberus connect(Duration lease) {
            return Cerberus.builder()
                    .engine(engineUri())
                    .namespace(namespace)
                    .defaultLease(lease)
                    .build();
        }
    }
}
