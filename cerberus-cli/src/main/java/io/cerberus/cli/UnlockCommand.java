package io.cerberus.cli;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.LockInfo;
import io.cerberus.check.console.Durations;
import java.io.PrintWriter;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code cerberus unlock NAME --force [--token N]}: an operator frees a lock another process holds
 * ({@link Cerberus#forceRelease}). The hold is named by its fencing token, looked up by an inspect
 * when not given, so a lock that changed hands since is never freed.
 */
@Command(
        name = "unlock",
        header = "Frees a stuck lock that another process holds (needs --force).",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = {
            "Frees the hold of lock NAME whoever holds it, and wakes its waiters: for a lock stuck with a holder that"
                    + " hangs. The holder learns it lost the lock (at its next renewal, or from its engine's watch) and"
                    + " its late writes carry an older fencing token than the next holder's.",
            "Without --token it shows the hold (holder, fencing token, lease left) and frees that token; with --token"
                    + " it frees only the hold with that token. Either way a lock that changed hands since has a newer"
                    + " token and is left alone.",
            "Engines: Redis (single, Sentinel, Cluster), ZooKeeper, etcd, jdbc in lease-row mode, and a simple-tier"
                    + " store with a fencing counter (with --token); not file:, jdbc session mode, Redlock or"
                    + " Memcached."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the hold was freed",
            ExitCodes.NOT_FREED + ":nothing was freed: the lock is not held, or no hold has that token now",
            ExitCodes.USAGE_LINE + " (here also: without --force, or on an engine that cannot free another's hold)",
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.UNSAFE_LINE,
            ExitCodes.INTERNAL_LINE
        })
final class UnlockCommand implements Callable<Integer> {
    @Mixin
    private EngineOptions engine;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock to free.")
    private String name;

    @Option(
            names = "--force",
            description =
                    "Required: says that you mean to free a lock another process holds (it may still be working).")
    private boolean force;

    @Option(
            names = "--token",
            paramLabel = "N",
            description = "Free only the hold with this fencing token (from 'cerberus inspect'). Default: the one"
                    + " held now, as shown")
    private Long token;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        if (!force) {
            throw new ParameterException(
                    spec.commandLine(),
                    "refused without --force: unlock frees a lock that another process holds, and that process may"
                            + " still be working under it. Look at it with 'cerberus inspect', then run 'cerberus"
                            + " unlock " + Printable.escape(name) + " --force'");
        }
        try (Cerberus cerberus = engine.connect()) {
            cerberus.lock(name); // checks the name by the lock name rules before anything is looked up
            OptionalLong fencingToken = token != null ? OptionalLong.of(token) : heldToken(cerberus);
            if (fencingToken.isEmpty()) {
                return notFreed("lock '" + Printable.escape(name) + "' is not held: nothing to free");
            }
            if (!cerberus.forceRelease(name, fencingToken.getAsLong())) {
                return notFreed("lock '" + Printable.escape(name) + "' was not freed: no hold has fencing token "
                        + fencingToken.getAsLong()
                        + " now (it was released, or it changed hands; see 'cerberus inspect')");
            }
            PrintWriter out = spec.commandLine().getOut();
            out.println("freed lock '" + Printable.escape(name) + "' (fencing token " + fencingToken.getAsLong()
                    + "); its holder learns that it lost the lock");
            out.flush();
            return ExitCodes.OK;
        }
    }

    /**
     * Shows the hold of the lock and returns its token; -1 on an engine without fencing tokens, whose
     * {@code forceRelease} then refuses with the engine's reason.
     *
     * @return the token, or empty when the lock is not held
     * @throws IllegalArgumentException when it has several holds (readers): one must be chosen
     */
    private OptionalLong heldToken(Cerberus cerberus) {
        if (!cerberus.capabilities().contains(Capability.FENCING)) {
            return OptionalLong.of(-1);
        }
        if (!cerberus.capabilities().contains(Capability.INSPECT)) {
            throw new ParameterException(
                    spec.commandLine(),
                    "this engine cannot list its holds, so the hold to free must be named: give --token N, the"
                            + " fencing token of the hold (its holder's Lease.fencingToken())");
        }
        List<LockInfo> holds = cerberus.inspect(name).stream()
                .filter(hold -> hold.name().equals(name))
                .toList();
        PrintWriter out = spec.commandLine().getOut();
        holds.forEach(hold -> out.println(describe(hold)));
        out.flush();
        if (holds.size() > 1) {
            throw new IllegalArgumentException("lock '" + Printable.escape(name) + "' has " + holds.size()
                    + " holds (readers): choose one with --token N");
        }
        return holds.isEmpty()
                ? OptionalLong.empty()
                : OptionalLong.of(holds.get(0).fencingToken());
    }

    private int notFreed(String why) {
        PrintWriter err = spec.commandLine().getErr();
        err.println(spec.qualifiedName() + ": " + why);
        err.flush();
        return ExitCodes.NOT_FREED;
    }

    private static String describe(LockInfo hold) {
        return "lock '" + Printable.escape(hold.name()) + "' (" + hold.mode() + ") held by "
                + Printable.escape(hold.holder()) + ", fencing token "
                + (hold.fencingToken() < 0 ? "- (none)" : Long.toString(hold.fencingToken())) + ", lease left "
                + hold.leaseRemaining().map(Durations::format).orElse("session");
    }
}
