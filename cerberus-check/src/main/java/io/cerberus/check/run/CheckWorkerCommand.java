package io.cerberus.check.run;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.CerberusMetrics;
import io.cerberus.Fence;
import io.cerberus.Leadership;
import io.cerberus.check.console.Durations;
import io.cerberus.check.log.CheckLocks;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import io.cerberus.check.log.Registers;
import io.cerberus.check.recipe.Recipe;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * One client of {@code cerberus check}, in its own JVM: loops acquire → read the register → think
 * → write value + 1 with the fencing token → release, logging every step to its event log and
 * announcing {@code HOLD}, {@code READ} and {@code FREE} on standard output so the checker can
 * aim faults at the holder. With {@code --locks N} each round takes one of the N locks at random
 * (and works on that lock's register), and {@code --loops K} runs K such loops on K threads of
 * one client (logged as {@code CLIENT.0} ...); the announcement is then the busiest loop's state. With {@code --leader}
 * each round is a term of leadership instead, its token the term: one act, or with {@code --leader-term D} act after act
 * until D after the election, never while the leadership is in doubt, ending at once when it is revoked; then the leader
 * steps down and contends again. With {@code --permits N} each round takes one permit of a semaphore of N under the
 * name and works on its slot's register, keyed by the permit's fence name ({@code NAME#SLOT}); its lines are about that
 * slot ({@link CheckLocks#unit}). What the engine got wrong (failed acquisitions, renewals refused or
 * unreachable) and how long each grant and release took are logged as {@code ENGINE} events: the client's
 * side of a network fault. It does not check {@code Lease.isValid()} before writing: a pause can
 * come right after such a check, so only fencing can be relied on. Stops when its input ends.
 */
@Command(
        name = "check-worker",
        hidden = true,
        mixinStandardHelpOptions = true,
        description = "One client of 'cerberus check' (started by the checker; not meant to be run by hand).")
public final class CheckWorkerCommand implements Callable<Integer> {
    @Mixin
    private Workers.EngineOption engine;

    @Option(names = "--client", required = true, description = "Name of this client in the logs.")
    private String client;

    @Option(names = "--lock", required = true, description = "The lock name, or the prefix of the names of several.")
    private String lockName;

    @Option(
            names = "--register",
            required = true,
            description = "The register file, or the prefix of the files of several.")
    private Path registerFile;

    @Option(names = "--locks", defaultValue = "1", description = "How many locks (each with its register).")
    private int lockCount;

    @Option(names = "--loops", defaultValue = "1", description = "How many loops this client runs, one thread each.")
    private int loops;

    @Option(names = "--log", required = true, description = "The event log.")
    private Path logFile;

    @Option(names = "--lease", required = true, converter = Durations.class, description = "Lease time.")
    private Duration lease;

    @Option(
            names = "--think",
            required = true,
            converter = Durations.class,
            description = "Time between read and write.")
    private Duration think;

    @Option(names = "--no-lock", description = "Take no lock (negative control).")
    private boolean noLock;

    @Option(
            names = "--permits",
            defaultValue = "0",
            description = "Take one permit of a semaphore of this many under each lock name, instead of the lock.")
    private int permits;

    @Option(names = "--leader", description = "Be elected leader under the lock's name instead of taking the lock.")
    private boolean leader;

    @Option(
            names = "--leader-term",
            converter = Durations.class,
            description = "With --leader: keep leading and act again and again until this long after the election,"
                    + " then step down. Default: one act per term.")
    private Duration leaderTerm;

    @Option(
            names = "--on",
            defaultValue = "first",
            description = "With a second engine: the engine this client starts on, first or second.")
    private String startOn;

    @Option(names = "--no-fencing", description = "The register ignores tokens (negative control).")
    private boolean noFencing;

    @Option(names = "--recipe", description = "Take a hand-rolled lock instead of Cerberus's (negative control).")
    private String recipeName;

    @Option(names = "--armed", description = "The file whose existence arms the recipe's failpoint.")
    private Path armed;

    @Spec
    private CommandSpec spec;

    /** Logged when a try for a lock ran out of time: another held it. A lock asked for and never granted is stuck. */
    public static final String BUSY = "busy";

    /** How long a loop tries for a lock (or to be elected) before it logs {@link #BUSY} and picks again. */
    public static final Duration TRY = Held.TRY;

    /** How often a leader in doubt looks again whether it leads ({@code --leader-term}). */
    private static final Duration DOUBT_POLL = Duration.ofMillis(10);

    private final AtomicInteger holding = new AtomicInteger();
    private final AtomicInteger reading = new AtomicInteger();

    @Override
    public Integer call() throws Exception {
        if (leaderTerm != null && (!leader || leaderTerm.toMillis() < 1)) {
            throw new IllegalArgumentException("--leader-term needs --leader and a duration of at least 1ms, was "
                    + Durations.format(leaderTerm) + (leader ? "" : " without --leader"));
        }
        PrintWriter out = spec.commandLine().getOut();
        String secondEngine = System.getenv(Workers.SECOND_ENGINE_ENV);
        AtomicReference<String> wanted = new AtomicReference<>(startOn);
        AtomicReference<Cerberus> connected = new AtomicReference<>();
        AtomicReference<HoldLog> logged = new AtomicReference<>();
        AtomicBoolean stopped = CheckClient.stoppedWhenInputEnds(line -> {
            if (line.startsWith("switch ")) { // the checker's switch fault: a failover, or a fail-back
                wanted.set(line.substring("switch ".length()).strip());
                switchTo(wanted.get(), connected.get(), logged.get());
            }
        });
        CheckLocks locks = new CheckLocks(lockName, registerFile, lockCount, permits);
        try (Registers store = Registers.open(System.getenv(Workers.REGISTER_ENV), locks, !noFencing);
                HoldLog log = new HoldLog(logFile);
                Recipe recipe = recipeName == null
                        ? null
                        : Recipe.connect(
                                recipeName,
                                engine.engineUri(),
                                lease,
                                RecipeFailpoint.of(recipeName, armed, log, client, lease));
                Cerberus cerberus = noLock || recipe != null
                        ? null
                        : CheckClient.connectWhenUp(() -> connect(log, secondEngine), stopped, log, client)) {
            boolean fencing = cerberus != null && cerberus.capabilities().contains(Capability.FENCING);
            logged.set(log);
            connected.set(cerberus);
            switchTo(wanted.get(), cerberus, log);
            announce(out, "READY");
            List<Thread> threads = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int i = 0; i < loops; i++) {
                String name = loops == 1 ? client : client + "." + i;
                Thread thread = new Thread(
                        () -> {
                            try {
                                loop(
                                        name,
                                        cerberus,
                                        recipe,
                                        fencing,
                                        secondEngine != null,
                                        locks,
                                        store.registers(),
                                        log,
                                        out,
                                        stopped);
                            } catch (Throwable e) {
                                failure.compareAndSet(null, e);
                                stopped.set(true);
                            }
                        },
                        "check-loop-" + i);
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            log.log("END", client, -1, "");
            if (failure.get() instanceof Exception e) {
                throw e;
            } else if (failure.get() instanceof Error e) {
                throw e;
            }
        }
        return 0;
    }

    /** One loop: takes a lock (one of the N at random), works on its register, releases, until stopped. */
    private void loop(
            String name,
            Cerberus cerberus,
            Recipe recipe,
            boolean fencing,
            boolean fences,
            CheckLocks locks,
            List<Register> registers,
            HoldLog log,
            PrintWriter out,
            AtomicBoolean stopped)
            throws InterruptedException {
        while (!stopped.get()) {
            int lock = locks.count() == 1 ? 0 : ThreadLocalRandom.current().nextInt(locks.count());
            int unit = locks.unit(lock, 0); // a semaphore's busy and failed tries are logged on its first slot
            if (cerberus == null && recipe == null) {
                int slot = permits == 0 ? 0 : ThreadLocalRandom.current().nextInt(permits); // takes none: any slot
                unit = locks.unit(lock, slot);
                cycle(name, unit, registers.get(unit), log, out, Held.NOTHING, System.nanoTime(), stopped);
                continue;
            }
            long acquiring = System.nanoTime();
            Optional<Held> held;
            try {
                held = recipe != null
                        ? Held.take(recipe, locks.name(lock))
                        : leader
                                ? Held.elect(cerberus, locks.name(lock), name, fencing)
                                : permits > 0
                                        ? Held.takePermit(cerberus, locks.name(lock), permits, fencing)
                                        : Held.take(cerberus, locks.name(lock), fencing, fences);
            } catch (Held.Unanswered e) {
                log.log("ENGINE", name, unit, -1, "acquire failed");
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                continue;
            }
            if (held.isPresent()) {
                // read at once: a pause before the lines are written must not move this grant after grants made during
                // it
                long granted = System.nanoTime();
                unit = locks.unit(lock, held.get().slot());
                if (permits > 0 && !held.get().fenceName().equals(locks.unitName(unit))) { // the register is the slot's
                    throw new IllegalStateException(
                            "permit " + held.get().fenceName() + " is not " + locks.unitName(unit));
                }
                log.log(
                        "ENGINE",
                        name,
                        unit,
                        held.get().token(),
                        granted,
                        "acquire " + TimeUnit.NANOSECONDS.toMillis(granted - acquiring) + "ms");
                cycle(name, unit, registers.get(unit), log, out, held.get(), granted, stopped);
            } else {
                log.log("ENGINE", name, unit, -1, BUSY);
            }
        }
    }

    /**
     * One hold: acts on the register once, or with {@code --leader-term} as long as the term lasts ({@link #actWhileLeading}),
     * then releases it.
     */
    private void cycle(
            String name,
            int lock,
            Register register,
            HoldLog log,
            PrintWriter out,
            Held held,
            long granted,
            AtomicBoolean stopped)
            throws InterruptedException {
        long token = held.token();
        log.log("ACQ", name, lock, token, granted, "");
        held.onLost(() -> log.log("LOST", name, lock, token, ""));
        holding.incrementAndGet();
        announce(out);
        try {
            act(name, lock, register, log, out, token);
            if (leaderTerm != null) {
                actWhileLeading(name, lock, register, log, out, held, granted + leaderTerm.toNanos(), stopped);
            }
            // the hold ends, for this client, when it starts releasing: another may be granted before close() returns
            log.log("REL", name, lock, token, "");
        } finally {
            holding.decrementAndGet();
        }
        announce(out); // before the release, which may take long (a store without a leader): the aim must not take it
        // for a holder
        if (held != Held.NOTHING) {
            long releasing = System.nanoTime();
            Optional<String> lost = held.release();
            if (lost.isEmpty()) {
                log.log(
                        "ENGINE",
                        name,
                        lock,
                        token,
                        "release " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasing) + "ms");
            } else {
                log.log("LOST", name, lock, token, lost.get());
            }
        }
    }

    /**
     * A long-lived leader ({@code --leader-term}): acts again and again while its term lasts, until {@code termEnd}
     * or the stop. Before each act it asks where it stands: revoked (lost, or elected again under a newer term) ends
     * the term at once; in doubt ({@link Leadership#isLeader()} false while the hold may still be good: a renewal
     * unanswered, a lease run out during a pause) it does not act, and waits for the engine's word. Like the lock
     * loop it checks nothing between its read and its write: a pause can come right after any check, so only the
     * term, as the fencing token, can stop a deposed leader's write.
     */
    private void actWhileLeading(
            String name,
            int lock,
            Register register,
            HoldLog log,
            PrintWriter out,
            Held held,
            long termEnd,
            AtomicBoolean stopped)
            throws InterruptedException {
        boolean doubted = false;
        while (!stopped.get() && System.nanoTime() - termEnd < 0) {
            Held.Standing standing = held.standing();
            if (standing == Held.Standing.REVOKED) {
                return;
            }
            if (standing == Held.Standing.IN_DOUBT) {
                if (!doubted) {
                    log.log("ENGINE", name, lock, held.token(), "leadership uncertain");
                }
                doubted = true;
                LockSupport.parkNanos(DOUBT_POLL.toNanos());
                continue;
            }
            doubted = false;
            act(name, lock, register, log, out, held.token());
            announce(out);
        }
    }

    /**
     * One act on the register: read, think, write the value read + 1 with the token. A read refused as stale ends the
     * act (logged {@code READ stale}); a read or write the register's store did not answer is logged {@code ENGINE}
     * ({@code WRITE unknown} for a write: it may have been applied).
     */
    private void act(String name, int lock, Register register, HoldLog log, PrintWriter out, long token)
            throws InterruptedException {
        Fence fence = Fence.ofLong(Math.max(0, token)); // a fence's long form; no token (-1): every holder the same
        Optional<Register.State> state;
        try {
            state = register.read(fence);
        } catch (RuntimeException e) {
            log.log("ENGINE", name, lock, token, "register read failed: " + HoldLog.oneLine(e));
            return;
        }
        log.log(
                "READ",
                name,
                lock,
                token,
                state.map(read -> Long.toString(read.value())).orElse("stale"));
        if (state.isEmpty()) {
            return;
        }
        reading.incrementAndGet();
        announce(out);
        try {
            Thread.sleep(think.toMillis());
            String outcome;
            long writing = System.nanoTime(); // the line's time: the register took the write after it was sent
            try {
                outcome = register.write(state.get().value() + 1, fence) ? "ok" : "stale";
            } catch (RuntimeException e) {
                log.log("ENGINE", name, lock, token, "register write failed: " + HoldLog.oneLine(e));
                outcome = "unknown";
            }
            log.log("WRITE", name, lock, token, writing, outcome);
        } finally {
            reading.decrementAndGet();
        }
    }

    /** Switches to the named engine ({@code first} or {@code second}) and logs it, once connected. */
    private void switchTo(String engineName, Cerberus cerberus, HoldLog log) {
        if (cerberus == null || log == null || cerberus.engines().size() == 1) {
            return;
        }
        cerberus.switchEngine(engineName); // nothing when already there: logged all the same, as the checker's proof
        log.log("ENGINE", client, -1, "switched to " + engineName);
    }

    /** Connects with a metrics receiver that logs what the engine did wrong: the client's side of a network fault. */
    private Cerberus connect(HoldLog log, String secondEngine) {
        io.cerberus.CerberusBuilder builder = secondEngine == null
                ? Cerberus.builder().engine(engine.engineUri())
                : Cerberus.builder().engine("first", engine.engineUri()).engine("second", secondEngine);
        return builder.namespace(engine.namespace())
                .defaultLease(lease)
                .metrics(new CerberusMetrics() {
                    @Override
                    public void renewals(String engineName, RenewalOutcome outcome, int holds) {
                        if (outcome != RenewalOutcome.RENEWED) {
                            log.log(
                                    "ENGINE",
                                    client,
                                    -1,
                                    "renewal " + outcome.name().toLowerCase(Locale.ROOT));
                        }
                    }
                })
                .build();
    }

    /** Announces the client's busiest state: READ if a loop is inside its critical section, else HOLD if one holds, else FREE. */
    private void announce(PrintWriter out) {
        announce(out, reading.get() > 0 ? "READ" : holding.get() > 0 ? "HOLD" : "FREE");
    }

    private static void announce(PrintWriter out, String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }
}
