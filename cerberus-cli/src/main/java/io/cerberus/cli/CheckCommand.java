package io.cerberus.cli;

import io.cerberus.check.Check;
import io.cerberus.check.CheckOptions;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code cerberus check}: the safety checker of {@code cerberus-check}. This class only gives it the
 * command line: the options ({@link CheckOptions}, with the engine options every command shares),
 * the help and the exit codes; {@link Check#run} does the rest.
 */
@Command(
        name = "check",
        header = "Runs clients against one lock under faults and judges mutual exclusion.",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = {
            "Starts --clients client processes that loop: acquire the lock, read a register, wait --think, write"
                    + " the value + 1 with the lease's fencing token, release. The register (a file) refuses writes with a token"
                    + " lower than one it has seen. Meanwhile faults are injected every --fault-every: 'pause' stops the current"
                    + " holder with SIGSTOP for twice the lease, then SIGCONT; 'kill' kills it with SIGKILL and starts a new client;"
                    + " 'partition', 'drop' and 'delay' blackhole, reset or slow its connection through a proxy of its own; with --server,"
                    + " 'server-kill', 'leader-kill', 'majority-kill', 'failover' and 'failover-unreplicated' fault the server the checker"
                    + " runs."
                    + " The report (report.txt, timeline.html in --out) counts overlapping holds, stale writes stopped by fencing,"
                    + " lost updates and tokens going backwards. Verdict SAFE, SAFE_WITH_FENCING (holders overlapped but fencing"
                    + " refused every stale write), UNSAFE, or NO_PROGRESS (no client held the lock: nothing was shown)."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:verdict SAFE or SAFE_WITH_FENCING",
            "1:verdict UNSAFE: lost updates or tokens backwards",
            "2:verdict NO_PROGRESS: no client held the lock during the run",
            "3:verdict STUCK: clients asked for a lock at the end of the run and nobody was granted it",
            ExitCodes.USAGE_LINE,
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.UNSAFE_LINE,
            ExitCodes.INTERNAL_LINE
        })
final class CheckCommand implements Callable<Integer> {
    /** Exit code of an UNSAFE verdict. */
    static final int UNSAFE = Check.UNSAFE;
    /** Exit code of a run in which no client held the lock (or applied an effect). */
    static final int NO_PROGRESS = Check.NO_PROGRESS;
    /** Exit code of a run in which a lock was asked for at the end and granted to nobody. */
    static final int STUCK = Check.STUCK;

    @Mixin
    private EngineOptions engine;

    @Mixin
    private CheckOptions options;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Check.Engine target = new Check.Engine(engine.explicitEngine(), engine.engineUri(), engine.namespace());
        return Check.run(
                options, target, spec.commandLine().getOut(), spec.commandLine().getErr());
    }
}
