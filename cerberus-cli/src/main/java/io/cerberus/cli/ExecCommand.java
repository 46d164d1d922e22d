package io.cerberus.cli;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.LockLostException;
import io.cerberus.check.console.Durations;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code cerberus exec}: runs a command while holding a lock, a {@code flock(1)} that works across
 * processes and, with a networked engine, across machines. Meant for cron jobs and deploy steps
 * that must never run twice at once.
 *
 * <p>Order of events: check the command exists (no lock taken for a typo), connect (an engine
 * that cannot exclude other processes, {@code mem:}, is refused), take the lock (once, or waiting
 * up to {@code --wait}), start the command with the lock's name and fencing token in its
 * environment, wait for it while forwarding SIGTERM/SIGINT/SIGHUP, release the lock, exit with the
 * command's status — or with {@link ExitCodes#LOCK_LOST} if the lock was lost meanwhile, unless
 * {@code --on-lost=continue}. A loss is reported in one line on stderr.
 */
@Command(
        name = "exec",
        header = "Runs a command while holding a lock, so that it never runs twice at once (flock for many machines).",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        customSynopsis = {
            "cerberus exec --name=NAME [--wait=DURATION] [--lease=DURATION] [--on-lost=fail|continue|kill]",
            "              [--engine=URI] [--namespace=NS] [--verbose] [--] CMD [ARG...]"
        },
        description = {
            "Takes lock NAME (waiting up to --wait), runs CMD, and releases the lock when CMD ends. If the lock"
                    + " stays busy, CMD is not run and cerberus exits with 75. Meant for cron jobs and deploy steps"
                    + " that must never overlap, on one machine (file:) or many (a server engine).",
            "",
            "The command inherits standard input, output and error, and gets CERBERUS_LOCK_NAME and (on engines"
                    + " with fencing tokens) CERBERUS_FENCING_TOKEN in its environment. SIGTERM, SIGINT and SIGHUP"
                    + " sent to cerberus are passed on to it; cerberus then waits for it, releases the lock and exits"
                    + " with its status.",
            "",
            "If cerberus is killed (even with SIGKILL) the engine frees the lock (file: at once, lease engines"
                    + " after --lease), and on Linux the command is killed with it: it is started through"
                    + " 'setpriv --pdeathsig KILL' when /usr/bin/setpriv supports it, so it never runs on without"
                    + " its lock. Processes the command started itself are not covered.",
            "",
            "If the lock is lost while the command runs (its lease ran out: cerberus was paused or cut off from"
                    + " the engine), another holder may start meanwhile; cerberus says so in one line on stderr and"
                    + " does what --on-lost says. The default, fail, lets the command finish and exits with 79, so"
                    + " cron and CI notice.",
            "",
            "The engine must be shared by processes: mem: keeps locks inside the one cerberus process and is"
                    + " refused (exit 64)."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "N:the command's own exit code",
            "128+N:the command died of signal N, or cerberus got signal N before starting it",
            ExitCodes.USAGE_LINE,
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.UNSAFE_LINE,
            ExitCodes.INTERNAL_LINE,
            "75:the lock is held by someone else (stderr says who, if the engine can tell); the command was not run",
            "79:the lock was lost while the command ran (--on-lost=fail or kill)",
            "126:the command was found but cannot be executed",
            "127:the command was not found, or could not be started"
        },
        footer = {"", "Example: cerberus exec --name nightly-report --wait 10s -- ./report.sh --full"})
final class ExecCommand implements Callable<Integer> {
    /** The environment variable that gives the command the lock's name. */
    static final String LOCK_NAME_ENV = "CERBERUS_LOCK_NAME";
    /** The environment variable that gives the command the fencing token of its hold. */
    static final String FENCING_TOKEN_ENV = "CERBERUS_FENCING_TOKEN";

    private static final Duration SHORTEST_LEASE = Duration.ofMillis(100);
    /** How long {@code --on-lost=kill} gives the command after SIGTERM before SIGKILL. */
    static final Duration KILL_GRACE = Duration.ofSeconds(10);

    @Mixin
    private EngineOptions engine;

    @Option(
            names = "--name",
            required = true,
            paramLabel = "NAME",
            description = "Name of the lock to hold while the command runs.")
    private String name;

    @Option(
            names = "--wait",
            paramLabel = "DURATION",
            defaultValue = "0",
            converter = Durations.class,
            description = "How long to wait for a busy lock: 500ms, 10s, 2m, 1h. Default: 0 (try once).")
    private Duration wait;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            defaultValue = "30s",
            converter = Durations.class,
            description = "How long the engine keeps the lock if cerberus stops renewing it (killed, paused, cut off);"
                    + " renewed every lease/3 while the command runs, so the command may run longer. At least 100ms."
                    + " Session-bound engines (file:) free it at once when cerberus dies. Default: 30s.")
    private Duration lease;

    @Option(
            names = "--on-lost",
            paramLabel = "ACTION",
            defaultValue = "fail",
            description =
                    "What to do if the lock is lost while the command runs: fail (default): let the command finish,"
                            + " then exit with 79; continue: let it finish and exit with its own code; kill: stop it (SIGTERM, then"
                            + " SIGKILL after 10s) and exit with 79.")
    private String onLost;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command and its arguments, after --.")
    private List<String> command;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        if (lease.compareTo(SHORTEST_LEASE) < 0) {
            throw new ParameterException(
                    spec.commandLine(), "--lease must be at least 100ms, was " + Durations.format(lease));
        }
        if (!List.of("fail", "continue", "kill").contains(onLost)) {
            throw new ParameterException(
                    spec.commandLine(), "--on-lost must be fail, continue or kill, was '" + onLost + "'");
        }
        PrintWriter err = spec.commandLine().getErr();
        try {
            CommandLauncher.checkRunnable(command.get(0));
        } catch (CommandLauncher.CannotRun e) {
            return fail(err, e.getMessage(), e.exitCode());
        }
        boolean dieWithParent = CommandLauncher.canDieWithParent();
        SignalForwarder signals = SignalForwarder.install(Thread.currentThread());
        try (Cerberus cerberus = engine.connect(engine.engineUri(), lease)) {
            if (!cerberus.capabilities().contains(Capability.MULTI_PROCESS)) {
                return fail(
                        err,
                        "engine " + cerberus.currentEngineUri()
                                + " keeps its locks inside this one cerberus process, so"
                                + " exec would exclude nothing; use file:DIR on one machine, or a server engine across machines",
                        ExitCodes.USAGE);
            }
            Optional<Lease> acquired;
            try {
                acquired = cerberus.lock(name).tryAcquire(wait);
            } catch (InterruptedException e) {
                return stoppedBeforeStart(err, signals);
            }
            if (acquired.isEmpty()) {
                return fail(
                        err,
                        "lock '" + name + "' is busy, " + holderOf(cerberus) + "; the command was not run"
                                + (wait.isZero()
                                        ? " (use --wait to wait for it)"
                                        : " (waited " + Durations.format(wait) + ")"),
                        ExitCodes.LOCK_BUSY);
            }
            Lease held = acquired.get();
            CommandStopper stopper = new CommandStopper();
            AtomicBoolean lossReported = new AtomicBoolean();
            held.onLost((lost, reason) -> {
                reportLost(err, reason, lossReported);
                if (onLost.equals("kill")) {
                    stopper.stop();
                }
            });
            int status;
            try {
                status = runCommand(err, signals, environment(cerberus, held), dieWithParent, stopper);
            } finally {
                release(err, held, lossReported);
            }
            return lossReported.get() && !onLost.equals("continue") ? ExitCodes.LOCK_LOST : status;
        }
    }

    /**
     * Stops the command for {@code --on-lost=kill}: SIGTERM at once (or as soon as it has started),
     * SIGKILL if it still runs {@link #KILL_GRACE} later.
     */
    private static final class CommandStopper {
        private Process process;
        private boolean stopped;

        synchronized void started(Process started) {
            process = started;
            if (stopped) {
                terminate();
            }
        }

        synchronized void stop() {
            stopped = true;
            if (process != null) {
                terminate();
            }
        }

        private void terminate() {
            Process running = process;
            running.destroy();
            Thread killer = new Thread(
                    () -> {
                        try {
                            if (!running.waitFor(KILL_GRACE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                                running.destroyForcibly();
                            }
                        } catch (InterruptedException e) {
                            running.destroyForcibly();
                        }
                    },
                    "cerberus-exec-kill");
            killer.setDaemon(true);
            killer.start();
        }
    }

    private int runCommand(
            PrintWriter err,
            SignalForwarder signals,
            Map<String, String> environment,
            boolean dieWithParent,
            CommandStopper stopper) {
        Process child;
        try {
            child = signals.start(CommandLauncher.builder(command, environment, dieWithParent));
        } catch (IOException e) {
            return fail(err, "cannot start " + command.get(0) + ": " + e.getMessage(), ExitCodes.COMMAND_NOT_FOUND);
        }
        if (child == null) {
            return stoppedBeforeStart(err, signals);
        }
        stopper.started(child);
        while (true) {
            try {
                return child.waitFor();
            } catch (InterruptedException e) {
                // only signals interrupt this thread, and they are forwarded to the command: keep waiting for it
            }
        }
    }

    private Map<String, String> environment(Cerberus cerberus, Lease held) {
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put(LOCK_NAME_ENV, name);
        if (cerberus.capabilities().contains(Capability.FENCING)) {
            environment.put(FENCING_TOKEN_ENV, Long.toString(held.fencingToken()));
        }
        return environment;
    }

    private String holderOf(Cerberus cerberus) {
        if (!cerberus.capabilities().contains(Capability.INSPECT)) {
            return "held by another client";
        }
        try {
            List<LockInfo> holds = cerberus.inspect(name).stream()
                    .filter(hold -> hold.name().equals(name))
                    .toList();
            if (holds.isEmpty()) {
                return "held by another client (released since)";
            }
            return "held by "
                    + holds.stream()
                            .map(hold -> Printable.escape(hold.holder())
                                    + (hold.fencingToken() < 0 ? "" : " (fencing token " + hold.fencingToken() + ")"))
                            .collect(Collectors.joining(", "));
        } catch (RuntimeException e) {
            return "held by another client";
        }
    }

    /** The one line a loss gets: what happened, and what exec does about it. */
    private void reportLost(PrintWriter err, LockLostException reason, AtomicBoolean lossReported) {
        if (lossReported.compareAndSet(false, true)) {
            String then = switch (onLost) {
                case "kill" ->
                    "stopping the command (SIGTERM, SIGKILL after " + Durations.format(KILL_GRACE) + "); exit code "
                            + ExitCodes.LOCK_LOST;
                case "continue" -> "the command keeps running (--on-lost=continue)";
                default -> "the command keeps running; exit code " + ExitCodes.LOCK_LOST + " when it ends";
            };
            err.println(prefix() + "lost lock '" + name + "' while the command ran (" + reason.getMessage()
                    + "); another holder may have it now: " + then);
            err.flush();
        }
    }

    private void release(PrintWriter err, Lease held, AtomicBoolean lossReported) {
        try {
            held.close();
        } catch (LockLostException e) {
            reportLost(err, e, lossReported);
        } catch (EngineUnavailableException e) {
            err.println(prefix() + "warning: could not release lock '" + name + "': " + e.getMessage()
                    + "; the engine frees it when its lease ends");
            err.flush();
        }
    }

    private int stoppedBeforeStart(PrintWriter err, SignalForwarder signals) {
        int signal = signals.signalBeforeStart();
        if (signal == 0) {
            return fail(
                    err,
                    "interrupted while taking lock '" + name + "'; the command was not run",
                    ExitCodes.INTERNAL_ERROR);
        }
        return fail(
                err,
                "stopped by " + SignalForwarder.name(signal) + " before the command started; it was not run",
                ExitCodes.SIGNAL_BASE + signal);
    }

    private int fail(PrintWriter err, String message, int exitCode) {
        err.println(prefix() + message);
        err.flush();
        return exitCode;
    }

    private String prefix() {
        return spec.qualifiedName() + ": ";
    }
}
