package io.cerberus.cli;

import io.cerberus.Cerberus;
import io.cerberus.Capability;
import io.cerberus.CerberusMetrics;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * aim faults at the holder. What the engine got wrong (failed acquisitions, renewals refused or
 * unreachable) and how long each grant and release took are logged as {@code ENGINE} events: the client's
 * side of a network fault. It does not check {@code Lease.isValid()} before writing: a pause can
 * come right after such a check, so only fencing can be relied on. Stops when its input ends.
 */
@Command(name = "check-worker", hidden = true,
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = "One client of 'cerberus check' (started by the checker; not meant to be run by hand).")
final class CheckWorkerCommand implements Callable<Integer> {
    @Mixin
    private EngineOptions engine;

    @Option(names = "--client", required = true, description = "Name of this client in the logs.")
    private String client;

    @Option(names = "--lock", required = true, description = "The lock name.")
    private String lockName;

    @Option(names = "--register", required = true, description = "The register file.")
    private Path registerFile;

    @Option(names = "--log", required = true, description = "The event log.")
    private Path logFile;

    @Option(names = "--lease", required = true, converter = Durations.class, description = "Lease time.")
    private Duration lease;

    @Option(names = "--think", required = true, converter = Durations.class, description = "Time between read and write.")
    private Duration think;

    @Option(names = "--no-lock", description = "Take no lock (negative control).")
    private boolean noLock;

    @Option(names = "--no-fencing", description = "The register ignores tokens (negative control).")
    private boolean noFencing;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        AtomicBoolean stopped = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // the checker closes our input to stop us
                }
            } catch (IOException e) {
                // treated as closed
            }
            stopped.set(true);
        }, "check-worker-input");
        stdin.setDaemon(true);
        stdin.start();
        FencedRegister register = new FencedRegister(registerFile, !noFencing);
        try (HoldLog log = new HoldLog(logFile);
                Cerberus cerberus = noLock ? null : connect(log)) {
            boolean fencing = cerberus != null && cerberus.capabilities().contains(Capability.FENCING);
            announce(out, "READY");
            while (!stopped.get()) {
                if (cerberus == null) {
                    cycle(register, log, out, -1, null);
                    continue;
                }
                Optional<Lease> lease;
                long acquiring = System.nanoTime();
                try {
                    lease = cerberus.lock(lockName).tryAcquire(Duration.ofMillis(500));
                } catch (EngineUnavailableException e) {
                    log.log("ENGINE", client, -1, "acquire failed");
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                    continue;
                }
                if (lease.isPresent()) {
                    long token = fencing ? lease.get().fencingToken() : -1;
                    log.log("ENGINE", client, token, "acquire " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquiring) + "ms");
                    cycle(register, log, out, token, lease.get());
                }
            }
            log.log("END", client, -1, "");
        }
        return ExitCodes.OK;
    }

    private void cycle(FencedRegister register, HoldLog log, PrintWriter out, long token, Lease lease) throws InterruptedException {
        log.log("ACQ", client, token, "");
        if (lease != null) {
            lease.onLost((lost, reason) -> log.log("LOST", client, token, ""));
        }
        announce(out, "HOLD " + token);
        FencedRegister.State state = register.read(token);
        log.log("READ", client, token, Long.toString(state.value()));
        announce(out, "READ " + token);
        Thread.sleep(think.toMillis());
        boolean written = register.write(state.value() + 1, token);
        log.log("WRITE", client, token, written ? "ok" : "stale");
        // the hold ends, for this client, when it starts releasing: another may be granted before close() returns
        log.log("REL", client, token, "");
        if (lease != null) {
            long releasing = System.nanoTime();
            try {
                lease.close();
                log.log("ENGINE", client, token, "release " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasing) + "ms");
            } catch (LockLostException e) {
                log.log("LOST", client, token, "at release");
            } catch (EngineUnavailableException e) {
                log.log("LOST", client, token, "release unconfirmed");
            }
        }
        announce(out, "FREE");
    }

    /** Connects with a metrics receiver that logs what the engine did wrong: the client's side of a network fault. */
    private Cerberus connect(HoldLog log) {
        return Cerberus.builder().engine(engine.engineUri()).namespace(engine.namespace()).defaultLease(lease)
                .metrics(new CerberusMetrics() {
                    @Override
                    public void renewals(String engineName, RenewalOutcome outcome, int holds) {
                        if (outcome != RenewalOutcome.RENEWED) {
                            log.log("ENGINE", client, -1, "renewal " + outcome.name().toLowerCase(Locale.ROOT));
                        }
                    }
                }).build();
    }

    private static void announce(PrintWriter out, String line) {
        out.println(line);
        out.flush();
    }
}
