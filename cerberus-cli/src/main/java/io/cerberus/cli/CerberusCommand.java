package io.cerberus.cli;

import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.check.console.ConsoleLogging;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The {@code cerberus} command: the entry point of the command line and of {@code cerberus.jar}.
 *
 * <p>Errors print one line to standard error, {@code cerberus <command>: <what went wrong>}, and
 * exit with a code from {@link ExitCodes}; {@code --verbose} adds the stack trace.
 */
@Command(
        name = "cerberus",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = "Distributed locks from the command line.",
        subcommands = {
            DemoCommand.class,
            ExecCommand.class,
            InspectCommand.class,
            UnlockCommand.class,
            CheckCommand.class,
            ServersCommand.class,
            DemoWorkerCommand.class
        },
        footer = {
            "",
            "Run 'cerberus COMMAND --help' for a command's options and exit codes.",
            "Documentation: docs/CLI.md"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            ExitCodes.USAGE_LINE,
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.UNSAFE_LINE,
            ExitCodes.INTERNAL_LINE,
            "75:exec: the lock is held by someone else",
            "1:unlock: nothing was freed (the lock is not held, or no hold has that token now)",
            "*:exec: the exit code of the command (see 'cerberus exec --help')"
        })
public final class CerberusCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    private CerberusCommand() {}

    /**
     * Runs the command line and exits with its exit code.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        // The jar holds the Redis, ZooKeeper and etcd clients; with netty's native epoll transport on the
        // class path, Lettuce's options for it are refused by other channels with a warning per
        // connection. The command line needs no native transport.
        if (System.getProperty("io.netty.transport.noNative") == null) {
            System.setProperty("io.netty.transport.noNative", "true");
        }
        ConsoleLogging.configure();
        System.exit(run(args));
    }

    /**
     * Runs the command line.
     *
     * @param args the arguments
     * @return the exit code
     */
    static int run(String... args) {
        return run(commandLine(), args);
    }

    /**
     * Runs the command line, writing what it prints to {@code out} and {@code err}: a run inside the calling JVM.
     *
     * @param args the arguments
     * @return the exit code
     */
    static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine commandLine = commandLine();
        commandLine.setOut(out);
        commandLine.setErr(err);
        return run(commandLine, args);
    }

    private static int run(CommandLine commandLine, String... args) {
        commandLine.setParameterExceptionHandler(CerberusCommand::usageError);
        commandLine.setExecutionExceptionHandler(CerberusCommand::failure);
        return commandLine.execute(args);
    }

    /** @return the command line as {@link #run} parses it, without its handlers */
    static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new CerberusCommand());
        // everything after the command's name belongs to the command, even without "--"
        commandLine.getSubcommands().get("exec").setStopAtPositional(true);
        return commandLine;
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "a command is needed: demo, exec or inspect");
    }

    private static int usageError(ParameterException e, String[] args) {
        CommandLine failed = e.getCommandLine();
        PrintWriter err = failed.getErr();
        err.println(
                failed.getCommandName().equals("cerberus")
                        ? "cerberus: " + e.getMessage() + "; see 'cerberus --help'"
                        : prefix(failed) + e.getMessage() + "; see '"
                                + failed.getCommandSpec().qualifiedName() + " --help'");
        err.flush();
        return ExitCodes.USAGE;
    }

    private static int failure(Exception e, CommandLine failed, ParseResult parseResult) {
        int code;
        if (e instanceof IllegalArgumentException || e instanceof UnsupportedCapabilityException) {
            code = ExitCodes.USAGE;
        } else if (e instanceof EngineUnavailableException) {
            code = ExitCodes.ENGINE_UNAVAILABLE;
        } else if (e instanceof UnsafeEngineException) {
            code = ExitCodes.UNSAFE_ENGINE;
        } else {
            code = ExitCodes.INTERNAL_ERROR;
        }
        PrintWriter err = failed.getErr();
        String message = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
        if (code == ExitCodes.INTERNAL_ERROR && !(e instanceof CliFailure)) {
            message = e.getClass().getSimpleName() + ": " + message;
        }
        err.println(prefix(failed) + message);
        if (ConsoleLogging.isVerbose()) {
            e.printStackTrace(err);
        }
        err.flush();
        return code;
    }

    private static String prefix(CommandLine failed) {
        return failed.getCommandSpec().qualifiedName() + ": ";
    }

    /** Reads the version Maven wrote into {@code version.properties}. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties properties = new Properties();
            try (InputStream in = CerberusCommand.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    properties.load(in);
                }
            }
            return new String[] {
                "cerberus " + properties.getProperty("version", "(unknown version)") + " (Java " + Runtime.version()
                        + ", " + System.getProperty("java.vm.name") + ")"
            };
        }
    }
}
