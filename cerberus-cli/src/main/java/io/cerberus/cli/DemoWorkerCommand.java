package io.cerberus.cli;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * One service instance of {@code cerberus demo}, run in its own JVM by the demo. Talks to the demo
 * over standard streams: prints {@value #READY} once its buyers are ready, starts the sale when it
 * reads {@value #GO}, and ends with {@code RESULT <sold> <last fencing token or -1>}. Exits without
 * selling if its input ends first (the demo is gone).
 */
@Command(
        name = "demo-worker",
        hidden = true,
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = "One service instance of 'cerberus demo' (started by the demo; not meant to be run by hand).")
final class DemoWorkerCommand implements Callable<Integer> {
    /** The lock every purchase of the demo takes. */
    static final String LOCK_NAME = "flash-sale:stock";

    static final String READY = "READY";
    static final String GO = "GO";
    static final String RESULT = "RESULT ";

    @Mixin
    private EngineOptions engine;

    @Option(names = "--instance", required = true, description = "Name of this instance in the report.")
    private String instance;

    @Option(names = "--store", required = true, description = "The stock file.")
    private Path store;

    @Option(names = "--seconds", required = true, description = "How long the sale lasts.")
    private int seconds;

    @Option(names = "--buyers", required = true, description = "Buyer threads.")
    private int buyers;

    @Option(names = "--no-lock", description = "Sell without the lock.")
    private boolean noLock;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        StockFile stock = new StockFile(store);
        try (Cerberus cerberus = noLock ? null : engine.connect()) {
            DistributedLock lock = cerberus == null ? null : cerberus.lock(LOCK_NAME);
            boolean fencing = cerberus != null && cerberus.capabilities().contains(Capability.FENCING);
            CountDownLatch go = new CountDownLatch(1);
            AtomicLong saleEnds = new AtomicLong();
            LongAdder sold = new LongAdder();
            AtomicLong lastFence = new AtomicLong(-1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 1; i <= buyers; i++) {
                Thread buyer = new Thread(
                        () -> {
                            try {
                                go.await();
                                buy(stock, lock, fencing, saleEnds.get(), sold, lastFence);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            } catch (RuntimeException | Error e) {
                                failure.compareAndSet(null, e);
                            }
                        },
                        "buyer-" + instance + i);
                buyer.start();
                threads.add(buyer);
            }
            out.println(READY);
            out.flush();
            String command = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (!GO.equals(command)) {
                threads.forEach(Thread::interrupt);
                return ExitCodes.INTERNAL_ERROR;
            }
            saleEnds.set(System.nanoTime() + Duration.ofSeconds(seconds).toNanos());
            go.countDown();
            for (Thread buyer : threads) {
                buyer.join();
            }
            if (failure.get() != null) {
                throw new CliFailure("instance " + instance + ": a buyer failed: " + failure.get(), failure.get());
            }
            out.println(RESULT + sold.sum() + " " + lastFence.get());
            out.flush();
            return ExitCodes.OK;
        }
    }

    /**
     * One buyer: tries to buy every 1-3 ms until the sale ends, each purchase under the lock unless
     * there is none. The pause also gives the other instance its chances at the lock: file: locks are
     * not fair, and threads that retried at once would keep it inside one process.
     */
    private static void buy(
            StockFile stock, DistributedLock lock, boolean fencing, long saleEnds, LongAdder sold, AtomicLong lastFence)
            throws InterruptedException {
        long left;
        while ((left = saleEnds - System.nanoTime()) > 0) {
            if (lock == null) {
                if (stock.trySell()) {
                    sold.increment();
                }
            } else {
                Optional<Lease> acquired = lock.tryAcquire(Duration.ofNanos(left));
                if (acquired.isEmpty()) {
                    return;
                }
                try (Lease lease = acquired.get()) {
                    if (stock.trySell()) {
                        sold.increment();
                        if (fencing) {
                            lastFence.accumulateAndGet(lease.fencingToken(), Math::max);
                        }
                    }
                }
            }
            // the buyer clicks "buy" again a moment later
            Thread.sleep(ThreadLocalRandom.current().nextInt(1, 4));
        }
    }
}
