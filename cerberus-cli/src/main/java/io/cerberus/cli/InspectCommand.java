package io.cerberus.cli;

import io.cerberus.Cerberus;
import io.cerberus.LockInfo;
import io.cerberus.check.console.Durations;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code cerberus inspect}: a table of the locks held in a namespace. */
@Command(
        name = "inspect",
        header = "Lists the locks held: name, mode, holder, fencing token, lease left, waiters.",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = {
            "Lists the locks held in a namespace: name, mode, holder, fencing token, lease left"
                    + " ('session' when the hold lives with the holder's process or session) and waiters ('?' when the"
                    + " engine cannot tell). A snapshot: it may be stale as soon as it is printed. With --engine given several"
                    + " times, one table per engine, the current one (the first) marked."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the table was printed (also when no lock is held)",
            ExitCodes.USAGE_LINE,
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.UNSAFE_LINE,
            ExitCodes.INTERNAL_LINE
        })
final class InspectCommand implements Callable<Integer> {
    private static final List<String> HEADER = List.of("NAME", "MODE", "HOLDER", "FENCE", "LEASE LEFT", "WAITERS");

    @Mixin
    private EngineOptions engine;

    @Parameters(
            arity = "0..1",
            paramLabel = "PREFIX",
            defaultValue = "",
            description = "Only locks whose name starts with this. Default: all")
    private String prefix;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (Cerberus cerberus = engine.connectAll()) {
            List<String> engines = cerberus.engines();
            if (engines.size() == 1) {
                print(out, cerberus.inspect(prefix));
            } else {
                for (String name : engines) {
                    boolean current = name.equals(cerberus.currentEngine());
                    out.println("engine " + name + (current ? " (current)" : "") + ":");
                    print(out, cerberus.inspectEngine(name, prefix));
                    out.println();
                }
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    private static void print(PrintWriter out, List<LockInfo> holds) {
        if (holds.isEmpty()) {
            out.println("no locks held");
        } else {
            List<List<String>> rows = new ArrayList<>();
            rows.add(HEADER);
            for (LockInfo hold : holds) {
                rows.add(List.of(
                        Printable.escape(hold.name()),
                        hold.mode(),
                        Printable.escape(hold.holder()),
                        hold.fencingToken() < 0 ? "-" : Long.toString(hold.fencingToken()),
                        hold.leaseRemaining().map(Durations::format).orElse("session"),
                        hold.waiters() < 0 ? "?" : Integer.toString(hold.waiters())));
            }
            printTable(out, rows);
        }
    }

    private static void printTable(PrintWriter out, List<List<String>> rows) {
        int[] widths = new int[HEADER.size()];
        for (List<String> row : rows) {
            for (int i = 0; i < widths.length; i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < widths.length; i++) {
                line.append(row.get(i));
                if (i < widths.length - 1) {
                    line.append(" ".repeat(widths[i] - row.get(i).length() + 2));
                }
            }
            out.println(line);
        }
    }
}
