package io.cerberus.check;

import io.cerberus.Cerberus;
import io.cerberus.check.console.Durations;
import io.cerberus.check.console.ProgressLine;
import io.cerberus.check.console.StopOnExit;
import io.cerberus.check.fault.ClientProxies;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.judge.Judge;
import io.cerberus.check.judge.LockJudgement;
import io.cerberus.check.judge.MutualExclusionJudge;
import io.cerberus.check.judge.PermitsJudge;
import io.cerberus.check.judge.PermitsJudgement;
import io.cerberus.check.judge.Stuck;
import io.cerberus.check.log.CheckLocks;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import io.cerberus.check.log.Registers;
import io.cerberus.check.recipe.Recipe;
import io.cerberus.check.report.CheckProgress;
import io.cerberus.check.report.Timeline;
import io.cerberus.check.run.CheckClient;
import io.cerberus.check.run.CheckWorkerCommand;
import io.cerberus.check.servers.LockServer;
import io.cerberus.spi.support.Redaction;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The lock check: K client JVMs ({@link CheckWorkerCommand}) loop on one lock (or on N, each with
 * its own, {@code --locks}) around a fenced register while faults are injected; the event logs are
 * then judged for overlapping holds, lost updates and fencing tokens going backwards (see
 * {@link MutualExclusionJudge}); with {@code --primitive semaphore} each slot of the semaphore as a lock, and the
 * writers at once against its permits ({@link PermitsJudge}). Faults on a client are aimed at the holder, in its critical section if
 * one is there.
 */
final class LockCheck {
    private final CheckOptions o;
    private final String namespace;
    private final LockServer lockServer;
    private final StopOnExit onExit;
    private final PrintWriter console;
    private final PrintWriter err;
    private int clientCount;
    private ClientProxies proxies;
    private String engineUri;
    private String registerStore;
    /** The engine new clients start on: {@code first}, or {@code second} after a switch fault's failover. */
    private volatile String engineNow = "first";

    /**
     * @param options the options of the run
     * @param namespace the clients' namespace
     * @param lockServer the server started for the run, or null
     * @param onExit kills the clients when a signal ends the run
     * @param console where the title and the report go
     * @param err where the progress line goes
     */
    LockCheck(
            CheckOptions options,
            String namespace,
            LockServer lockServer,
            StopOnExit onExit,
            PrintWriter console,
            PrintWriter err) {
        this.o = options;
        this.namespace = namespace;
        this.lockServer = lockServer;
        this.onExit = onExit;
        this.console = console;
        this.err = err;
    }

    /**
     * Runs the clients, injects the faults, judges and writes {@code report.txt} and {@code timeline.html}.
     *
     * @param engineUri the engine the clients use
     * @return the exit code of the verdict
     */
    int run(String engineUri) throws Exception {
        List<String> proxied =
                o.faults.stream().filter(ClientProxies.FAULTS::contains).toList();
        proxies = proxied.isEmpty() ? null : new ClientProxies(o.out);
        if (!o.noLock) {
            // fails early, with a clear message, when the engine is unreachable
            Cerberus probe = Cerberus.builder()
                    .engine(engineUri)
                    .namespace(namespace)
                    .defaultLease(o.lease)
                    .build();
            probe.close();
        }
        CheckLocks locks = new CheckLocks(o.lockName, o.out.resolve("register"), o.lockCount, o.permits());
        registerStore = registerStore();
        String title = "cerberus check: "
                + (o.noLock
                        ? "no lock"
                        : (o.recipe == null ? "" : "recipe " + o.recipe + " on ")
                                + (o.primitive.equals("leader")
                                        ? "leader election "
                                                + (o.leaderTerm == null
                                                        ? ""
                                                        : "with terms of up to " + Durations.format(o.leaderTerm) + " ")
                                                + "on "
                                        : o.permits() > 0 ? "a semaphore of " + o.permits() + " permits on " : "")
                                + Redaction.redact(engineUri))
                + (lockServer == null
                        ? ""
                        : " (started here"
                                + (LockServer.persistenceOf(o.server).isEmpty() ? "" : ", persistence " + o.persistence)
                                + (o.pgBouncer == null ? "" : ", through PgBouncer pool_mode=" + o.pgBouncer) + ")")
                + (o.noLock && o.permits() > 0 ? " (" + o.permits() + " slots)" : "")
                + ", " + o.clients + " clients"
                + (o.lockCount > 1 ? " on " + o.lockCount + (o.permits() > 0 ? " semaphores" : " locks") : "") + ", "
                + Durations.format(o.duration) + ", lease " + Durations.format(o.lease) + ", faults " + o.faults
                + (o.faults.contains("delay") ? " (delay " + Durations.format(o.delay) + ")" : "")
                + (o.faultLength != null ? ", each pause or cut lasting " + Durations.format(o.faultLength) : "")
                + (o.serverFaultEvery != null
                        ? ", a server fault at most every " + Durations.format(o.serverFaultEvery)
                        : "")
                + (o.register.equals("file")
                        ? ""
                        : ", registers in " + (o.register.equals("sql") ? "SQL rows" : "Redis keys"))
                + (o.secondEngine == null ? "" : ", switching to and from " + Redaction.redact(o.secondEngine))
                + (o.noFencing ? ", fencing ignored" : "");
        console.println(title);
        console.flush();
        try (Registers registers = Registers.open(registerStore, locks, !o.noFencing)) {
            registers.reset();
            CheckProgress progress = new CheckProgress(o.out, false, o.duration.toNanos(), registers.registers());
            try (ProgressLine line = o.progressLine(progress, err)) {
                return run(engineUri, locks, registers, title, console, progress, line);
            }
        }
    }

    /** @return where the registers are: null for files, else the store of --register-uri or of the server started */
    private String registerStore() {
        if (o.register.equals("file")) {
            return null;
        }
        if (o.registerUri != null) {
            return o.registerUri;
        }
        return lockServer
                .registerStore(o.register)
                .orElseThrow(() -> new IllegalArgumentException(
                        "--register " + o.register + " cannot be kept by --server " + o.server));
    }

    private int run(
            String engineUri,
            CheckLocks locks,
            Registers registerSet,
            String title,
            PrintWriter console,
            CheckProgress progress,
            ProgressLine line)
            throws Exception {
        List<CheckClient> running = new CopyOnWriteArrayList<>();
        onExit.add(() -> CheckClient.killAll(running));
        long stopping = 0; // a kill replaces its target while other faults run
        long start = System.nanoTime();
        try (HoldLog faultLog = new HoldLog(o.out.resolve("faults.log"))) {
            for (int i = 0; i < o.clients; i++) {
                running.add(startClient(engineUri));
            }
            this.engineUri = engineUri;
            CheckClient.awaitReady(running);
            // the duration counts from when every client runs: starting JVMs on a busy machine must not eat it
            Duration window = o.faultLength(false);
            FaultInjector.Plan plan = new FaultInjector.Plan(
                    o.faults,
                    o.faultEvery,
                    o.serverFaultEvery(),
                    o.parallelFaults,
                    window,
                    window,
                    o.delay,
                    o.serverDown,
                    o.lease.multipliedBy(2).plusSeconds(1));
            progress.running();
            new FaultInjector(plan, proxies, lockServer, () -> startClient(engineUri), this::holder, this::ownFault)
                    .run(running, faultLog, System.nanoTime() + o.duration.toNanos());
            stopping = System.nanoTime();
            progress.stopping();
        } finally {
            CheckClient.stopAll(running, proxies, CheckClient.CONFIRM);
        }
        progress.judging();
        long end = System.nanoTime();
        List<Register.State> registers = new ArrayList<>();
        for (Register register : registerSet.registers()) {
            registers.add(finalState(register));
        }
        // a lock asked for and granted to nobody for ten leases (at least 5 s) at the end is stuck: no engine keeps one
        // that long; a long-lived leader keeps its term's hold for --leader-term on top of that
        Stuck stuck = new Stuck(
                stopping,
                Math.max(o.lease.multipliedBy(10).toNanos(), TimeUnit.SECONDS.toNanos(5))
                        + (o.leaderTerm == null ? 0 : o.leaderTerm.toNanos()),
                o.lease.plus(CheckWorkerCommand.TRY).toNanos());
        List<HoldLog.Event> events = HoldLog.readAll(o.out);
        Judge.Judgement report = o.permits() > 0
                ? new PermitsJudge(registers, locks, start, end, stuck).judge(events)
                : new MutualExclusionJudge(registers, locks.names(), start, end, stuck).judge(events);
        String text = report.text(title);
        Files.writeString(o.out.resolve("report.txt"), text);
        Timeline.html(
                o.out.resolve("timeline.html"),
                title,
                report instanceof PermitsJudgement permits ? permits.slots() : (LockJudgement) report);
        line.close(); // a live line is cleared before the report
        console.print(text.substring(text.indexOf('\n') + 1));
        console.println("report: " + o.out.resolve("report.txt") + ", timeline: " + o.out.resolve("timeline.html"));
        console.flush();
        return report.outcome().exitCode();
    }

    /**
     * @return the register's state at the end; its store may be reconnecting after a server fault (the connection the
     *     checker read it on was cut), so failures are retried for up to {@link CheckClient#CONFIRM}
     */
    private static Register.State finalState(Register register) throws InterruptedException {
        long deadline = System.nanoTime() + CheckClient.CONFIRM.toNanos();
        while (true) {
            try {
                return register.read();
            } catch (RuntimeException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private CheckClient startClient(String engineUri) {
        String name = "c" + (++clientCount);
        String clientUri = proxies == null ? engineUri : proxies.clientUri(name, engineUri);
        List<String> args = new ArrayList<>(List.of(
                "--namespace",
                namespace,
                "--lock",
                o.lockName,
                "--register",
                o.out.resolve("register").toString(),
                "--log",
                o.out.resolve(name + ".log").toString(),
                "--lease",
                o.lease.toMillis() + "ms",
                "--think",
                o.think.toMillis() + "ms",
                "--locks",
                Integer.toString(o.lockCount),
                "--loops",
                Integer.toString(Math.min(o.lockCount, CheckOptions.MAX_LOOPS))));
        if (o.noLock) {
            args.add("--no-lock");
        }
        if (o.primitive.equals("leader")) {
            args.add("--leader");
        }
        if (o.leaderTerm != null) {
            args.addAll(List.of("--leader-term", o.leaderTerm.toMillis() + "ms"));
        }
        if (o.permits() > 0) {
            args.addAll(List.of("--permits", Integer.toString(o.permits())));
        }
        if (o.noFencing) {
            args.add("--no-fencing");
        }
        if (o.secondEngine != null) {
            args.addAll(List.of("--on", engineNow));
        }
        if (o.recipe != null) {
            args.addAll(List.of("--recipe", o.recipe, "--armed", armedFile(name).toString()));
        }
        return CheckClient.start(name, args, clientUri, registerStore, o.secondEngine);
    }

    /** @return the file whose existence arms a client's o.recipe failpoint */
    private Path armedFile(String client) {
        return o.out.resolve("armed-" + client);
    }

    /**
     * Arms the recipe's failpoint on one client and waits until a loop of it has reached it: it died there (then a new
     * client takes its place) or stalled there for twice the lease and went on.
     */
    private boolean ownFault(String fault, CheckClient target, List<CheckClient> running, HoldLog faultLog)
            throws Exception {
        if (fault.equals("switch")) {
            switchEngines(running, faultLog);
            return true;
        }
        if (!fault.equals("between-steps")) {
            return false;
        }
        betweenSteps(target, running, faultLog);
        return true;
    }

    /**
     * Sends every client to the other engine (a failover to the second, then a fail-back to the first) and waits until
     * each one running logged its switch; a paused client switches when it resumes, a killed one's successor starts on
     * the new engine. Confirmed when every client not paused has switched within {@link CheckClient#CONFIRM}.
     */
    private void switchEngines(List<CheckClient> running, HoldLog faultLog) throws Exception {
        String to = engineNow.equals("first") ? "second" : "first";
        engineNow = to;
        faultLog.log("FAULT", "clients", -1, "switch to " + to);
        long asked = System.nanoTime(); // the clients' logs share this clock: a line of an earlier switch is older
        Set<String> told = new HashSet<>();
        List<CheckClient> waiting = new ArrayList<>();
        long deadline = System.nanoTime() + CheckClient.CONFIRM.toNanos();
        do {
            // every client running, again each round: a replacement started just before the switch is told too
            for (CheckClient client : List.copyOf(running)) {
                if (told.add(client.name())) {
                    try {
                        client.send("switch " + to);
                        waiting.add(client);
                    } catch (RuntimeException gone) {
                        // killed meanwhile: its successor starts on the new engine
                    }
                }
            }
            waiting.removeIf(client -> !client.alive() || switched(client, to, asked));
            Thread.sleep(20);
        } while (!waiting.isEmpty() && System.nanoTime() - deadline < 0);
        faultLog.log(
                "FAULT",
                "clients",
                -1,
                waiting.isEmpty()
                        ? "confirmed switch: every client logged its switch to the " + to + " engine"
                        : "unconfirmed switch: "
                                + waiting.stream().map(CheckClient::name).toList() + " did not log their switch to the "
                                + to + " engine");
    }

    /** @return whether the client's log shows its switch to the engine since {@code asked} */
    private boolean switched(CheckClient client, String to, long asked) {
        try {
            return HoldLog.read(o.out.resolve(client.name() + ".log")).stream()
                    .anyMatch(event ->
                            event.nanos() - asked >= 0 && event.detail().equals("switched to " + to));
        } catch (IOException e) {
            return false; // being written: read again
        }
    }

    private void betweenSteps(CheckClient target, List<CheckClient> running, HoldLog faultLog) throws Exception {
        Recipe.FailpointAction action = Recipe.failpoint(o.recipe).orElseThrow();
        faultLog.log("FAULT", target.name(), -1, "between-steps");
        Files.createFile(armedFile(target.name()));
        Path log = o.out.resolve(target.name() + ".log");
        String evidence = action == Recipe.FailpointAction.CRASH ? "failpoint crash" : "failpoint stall over";
        long deadline = System.nanoTime()
                + o.lease.multipliedBy(2).plus(CheckClient.CONFIRM).toNanos();
        while (HoldLog.read(log).stream().noneMatch(event -> event.detail().equals(evidence))) {
            if (System.nanoTime() - deadline > 0) {
                Files.deleteIfExists(armedFile(target.name()));
                faultLog.log(
                        "FAULT",
                        target.name(),
                        -1,
                        "unconfirmed between-steps: " + target.name() + " never reached the failpoint");
                return;
            }
            Thread.sleep(10);
        }
        if (action == Recipe.FailpointAction.CRASH) {
            target.kill(CheckClient.CONFIRM); // it halted itself: this only waits for its end
            faultLog.log(
                    "FAULT", target.name(), -1, "confirmed between-steps: crashed between the recipe's two commands");
            running.remove(target);
            running.add(startClient(engineUri));
        } else {
            faultLog.log(
                    "FAULT", target.name(), -1, "confirmed between-steps: stalled between the recipe's two commands");
        }
    }

    /**
     * @param busy clients under a fault now, passed over
     * @return the client in its critical section (read done), else one holding, waiting up to ten leases (at least 2 s)
     *     for one, as after a server fault nobody may hold for seconds; else any free one
     */
    private CheckClient holder(List<CheckClient> running, Set<String> busy) throws InterruptedException {
        long deadline = System.nanoTime()
                + Math.max(TimeUnit.SECONDS.toNanos(2), o.lease.multipliedBy(10).toNanos());
        while (System.nanoTime() - deadline < 0) {
            for (String wanted : List.of("READ", "HOLD")) {
                for (CheckClient client : running) {
                    if (client.aimable()
                            && !busy.contains(client.name())
                            && client.state().equals(wanted)) {
                        return client;
                    }
                }
            }
            Thread.sleep(1);
        }
        return FaultInjector.anyFree(running, busy);
    }
}
