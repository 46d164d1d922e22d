package io.cerberus.cli;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.CerberusBuilder;
import io.cerberus.check.console.ConsoleLogging;
import io.cerberus.check.console.StopOnExit;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code cerberus demo}: the flash sale. A few items in stock, kept in a shared file; two service
 * instances (two JVMs) with many buyer threads each, all buying at once. Every purchase reads the
 * stock, checks the payment and writes the stock back: without a lock, buyers that read the same
 * stock sell the same item and the shop oversells; with {@code cerberus.lock("flash-sale:stock")}
 * around the purchase, every item is sold exactly once.
 */
@Command(
        name = "demo",
        header = "Runs the flash-sale demo: two processes selling a few items, with a lock or (--no-lock) without.",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = {
            "STOCK items in a shared file, two service instances (two processes) with BUYERS buyer threads"
                    + " each, all clicking buy every 1-3ms for SECONDS. Each purchase reads the stock, checks the"
                    + " payment (~1ms) and writes the stock back, under the lock 'flash-sale:stock'. With --no-lock"
                    + " the same sale oversells.",
            "",
            "The engine must be shared by processes (not mem:). Without --engine or $CERBERUS_ENGINE the demo uses"
                    + " an embedded file: engine in its own temporary directory, deleted at the end."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the demo ran (with or without overselling: it is a demonstration)",
            ExitCodes.USAGE_LINE,
            ExitCodes.UNAVAILABLE_LINE,
            ExitCodes.UNSAFE_LINE,
            ExitCodes.INTERNAL_LINE
        })
final class DemoCommand implements Callable<Integer> {
    private static final List<String> INSTANCES = List.of("A", "B");
    private static final Duration STARTUP = Duration.ofSeconds(60);

    @Mixin
    private EngineOptions engine;

    @Option(names = "--no-lock", description = "Sell without the lock, to see the oversell.")
    private boolean noLock;

    @Option(
            names = "--seconds",
            paramLabel = "N",
            defaultValue = "3",
            description = "How long the sale lasts, 1 to 600. Default: ${DEFAULT-VALUE}")
    private int seconds;

    @Option(
            names = "--stock",
            paramLabel = "N",
            defaultValue = "10",
            description = "Items in stock, 1 to 100000. Default: ${DEFAULT-VALUE}")
    private int stock;

    @Option(
            names = "--buyers",
            paramLabel = "N",
            defaultValue = "10",
            description = "Buyer threads per instance, 1 to 200. Default: ${DEFAULT-VALUE}")
    private int buyers;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        checkRange("--seconds", seconds, 1, 600);
        checkRange("--stock", stock, 1, 100_000);
        checkRange("--buyers", buyers, 1, 200);
        Path dir = createTempDirectory();
        List<DemoInstance> instances = new ArrayList<>();
        // on Ctrl-C too: the instances are processes of their own
        try (StopOnExit onExit = new StopOnExit("demo-cleanup")) {
            onExit.add(() -> deleteRecursively(dir));
            onExit.add(() -> instances.forEach(DemoInstance::close));
            return runSale(dir, instances);
        }
    }

    private int runSale(Path dir, List<DemoInstance> instances) throws InterruptedException {
        StockFile store = StockFile.create(dir.resolve("stock"), stock);
        String engineUri = engine.explicitEngine().orElse("file:" + dir.resolve("locks"));
        String engineShown = checkEngine(engineUri);
        PrintWriter out = spec.commandLine().getOut();
        out.printf(
                "Flash sale: %d items in stock, %d service instances x %d buyers, %ds%n",
                stock, INSTANCES.size(), buyers, seconds);
        out.println("Engine: " + engineShown);
        out.println(
                noLock
                        ? "Lock:   none (--no-lock): each purchase reads, checks and writes the stock unprotected"
                        : "Lock:   '" + DemoWorkerCommand.LOCK_NAME + "' around each purchase");
        out.flush();

        for (String name : INSTANCES) {
            instances.add(DemoInstance.start(name, workerArgs(name, dir), engineUri));
        }
        for (DemoInstance instance : instances) {
            instance.awaitLine(DemoWorkerCommand.READY, STARTUP);
        }
        // both instances are warmed up and connected: start the sale in both at the same moment
        instances.forEach(instance -> instance.send(DemoWorkerCommand.GO));
        List<Result> results = new ArrayList<>();
        for (DemoInstance instance : instances) {
            String[] fields = instance.awaitLine(
                            DemoWorkerCommand.RESULT,
                            Duration.ofSeconds(seconds).plus(STARTUP))
                    .split(" ");
            results.add(new Result(instance.name(), Long.parseLong(fields[0]), Long.parseLong(fields[1])));
            instance.awaitExit(Duration.ofSeconds(10));
        }
        printReport(out, results, store.read());
        return ExitCodes.OK;
    }

    private record Result(String instance, long sold, long lastFence) {}

    private void printReport(PrintWriter out, List<Result> results, int finalStock) {
        long sold = 0;
        for (Result result : results) {
            sold += result.sold();
            out.printf(
                    "  instance %s: sold %d%s%n",
                    result.instance(),
                    result.sold(),
                    result.lastFence() < 0 ? "" : " (last fencing token " + result.lastFence() + ")");
        }
        // every sale writes stock-1; a sale whose write was overwritten by a concurrent one sold an item twice
        long stockDrop = stock - finalStock;
        long soldTwice = sold - stockDrop;
        out.printf("Total sold: %d, final stock: %d (started with %d)%n", sold, finalStock, stock);
        if (soldTwice > 0) {
            String how = finalStock == 0
                    ? sold + " items sold, only " + stock + " were in stock"
                    : sold + " items sold, but the stock went down by only " + stockDrop;
            out.println("OVERSOLD by " + soldTwice + ": " + how
                    + (noLock ? " (run without --no-lock to see the lock prevent it)" : ""));
        } else {
            out.println("no oversell: every item sold exactly once"
                    + (finalStock > 0 ? " (" + finalStock + " left unsold)" : ""));
        }
        out.flush();
    }

    private List<String> workerArgs(String name, Path dir) {
        List<String> args = new ArrayList<>(List.of(
                "--instance",
                name,
                "--store",
                dir.resolve("stock").toString(),
                "--seconds",
                Integer.toString(seconds),
                "--buyers",
                Integer.toString(buyers),
                "--namespace",
                engine.namespace()));
        if (noLock) {
            args.add("--no-lock");
        }
        if (ConsoleLogging.isVerbose()) {
            args.add("--verbose");
        }
        return args;
    }

    /** Fails at once, before any process starts, if the engine is unreachable or one JVM only. */
    private String checkEngine(String engineUri) {
        try (Cerberus cerberus = engine.connect(engineUri, CerberusBuilder.DEFAULT_LEASE)) {
            if (!cerberus.capabilities().contains(Capability.MULTI_PROCESS)) {
                throw new IllegalArgumentException(
                        "the demo needs an engine shared by processes, but " + cerberus.currentEngineUri()
                                + " lives in one JVM; use a file: engine (the default) or a server engine");
            }
            return cerberus.currentEngineUri();
        }
    }

    private void checkRange(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ParameterException(
                    spec.commandLine(), option + " must be between " + min + " and " + max + ", was " + value);
        }
    }

    private static Path createTempDirectory() {
        try {
            return Files.createTempDirectory("cerberus-demo-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the demo's temporary directory", e);
        }
    }

    private static void deleteRecursively(Path dir) {
        try {
            Directories.deleteRecursively(dir);
        } catch (IOException e) {
            System.getLogger(DemoCommand.class.getName())
                    .log(
                            System.Logger.Level.WARNING,
                            "could not delete the demo's directory " + dir + ": " + e.getMessage());
        }
    }
}
