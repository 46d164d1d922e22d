package io.cerberus.check;

import io.cerberus.Cerberus;
import io.cerberus.check.console.Durations;
import io.cerberus.check.console.ProgressLine;
import io.cerberus.check.console.StopOnExit;
import io.cerberus.check.fault.ClientProxies;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.judge.IdempotencyJudge;
import io.cerberus.check.judge.IdempotencyReport;
import io.cerberus.check.log.EffectLedger;
import io.cerberus.check.log.EffectTable;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.JdbcUrls;
import io.cerberus.check.report.CheckProgress;
import io.cerberus.check.run.CheckClient;
import io.cerberus.check.servers.LockServer;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.spi.support.Redaction;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code cerberus check --idempotency}: K client JVMs ({@link IdempotencyWorkerCommand}) submit the
 * same operations through the idempotency guard while faults are injected, each operation applying
 * its effect to an {@link EffectLedger}; then {@link IdempotencyJudge} judges the ledger and the
 * logs. The machinery is the lock checker's: {@link CheckClient} (start, pause, resume, kill, each
 * confirmed), {@link ClientProxies} (partition, drop, delay per client), {@link LockServer} (the
 * server faults), {@link HoldLog}. Faults on a client are aimed at one that announced, less than
 * half a think ago, that it runs an operation (claimed, effect not applied yet), as the lock checker
 * aims at the holder.
 */
final class IdempotencyCheck {
    /** How long a key is live: clients keep submitting it for this long after it first comes. */
    private static final int KEY_LIFE_IN_LEASES = 8;

    /** What the run is: the options of {@code cerberus check}. */
    record Settings(
            String namespace,
            int clients,
            Duration duration,
            Duration lease,
            Duration think,
            List<String> faults,
            Duration faultEvery,
            Duration serverFaultEvery,
            Duration pause,
            Duration window,
            Duration serverDown,
            Duration delay,
            Path out,
            String server,
            String persistence) {}

    private final Settings settings;
    private final IdempotencyCheckOptions options;
    private final LockServer lockServer;
    private final StopOnExit onExit;
    private final PrintWriter console;
    private final java.util.function.Function<CheckProgress, ProgressLine> progressLine;
    private ClientProxies proxies;
    private String engineUri;
    private long epoch;
    private int clientCount;

    /**
     * @param onExit kills the clients when a signal ends the run
     * @param progressLine starts the run's status line (closed before the report is printed)
     */
    IdempotencyCheck(
            Settings settings,
            IdempotencyCheckOptions options,
            LockServer lockServer,
            StopOnExit onExit,
            PrintWriter console,
            java.util.function.Function<CheckProgress, ProgressLine> progressLine) {
        this.progressLine = progressLine;
        this.settings = settings;
        this.options = options;
        this.lockServer = lockServer;
        this.onExit = onExit;
        this.console = console;
    }

    /**
     * Runs the clients, injects the faults, judges and writes {@code report.txt}.
     *
     * @param engineUri the engine the clients use
     * @return the exit code: 0 (SAFE, DUPLICATES_EXPLAINED), {@link Check#UNSAFE}, {@link Check#NO_PROGRESS}
     */
    int run(String engineUri) throws Exception {
        this.engineUri = engineUri;
        String guard = options.guard();
        // CheckOptions has refused proxy faults on an engine that cannot be put behind proxies
        proxies = settings.faults().stream().anyMatch(ClientProxies.FAULTS::contains)
                ? new ClientProxies(settings.out())
                : null;
        if (guard.equals("cerberus")) {
            // fails early, with a clear message, when the engine is unreachable or keeps no records
            try (Cerberus probe = Cerberus.builder()
                    .engine(engineUri)
                    .namespace(settings.namespace())
                    .defaultLease(settings.lease())
                    .build()) {
                probe.idempotency(IdempotencyOptions.defaults().withLease(settings.lease()))
                        .close();
            }
        }
        Duration pause = settings.pause();
        String title = "cerberus check --idempotency: " + Redaction.redact(engineUri)
                + (lockServer == null
                        ? ""
                        : " (started here"
                                + (LockServer.persistenceOf(settings.server()).isEmpty()
                                        ? ""
                                        : ", persistence " + settings.persistence())
                                + ")")
                + ", guard "
                + switch (guard) {
                    case "none" -> "none (negative control)";
                    case "unchecked" -> "without owner checks (negative control)";
                    default -> "cerberus";
                }
                + ", " + settings.clients() + " clients, " + Durations.format(settings.duration()) + ", lease "
                + Durations.format(settings.lease())
                + ", think " + Durations.format(settings.think()) + ", " + options.keys + " live keys"
                + switch (options.effect) {
                    case "table" -> ", effects in " + EffectTable.TABLE + " with the records";
                    case "table-apart" ->
                        ", effects in " + EffectTable.TABLE + " apart from the records (negative control)";
                    default -> "";
                }
                + ", faults "
                + settings.faults()
                + (settings.faults().contains("pause") ? " (pause " + Durations.format(pause) + ")" : "")
                + (settings.faults().stream().anyMatch(ClientProxies.FAULTS::contains)
                        ? " (proxy faults " + Durations.format(settings.window()) + ")"
                        : "");
        console.println(title);
        console.flush();
        Path ledger = settings.out().resolve("ledger.txt");
        if (Files.exists(ledger) || Files.exists(settings.out().resolve("c1.log"))) {
            // the logs and the ledger are appended to: an earlier run's lines would be judged with this one's
            throw new IllegalArgumentException(
                    "--out " + settings.out() + " already holds a run (ledger.txt, c1.log); give a new directory");
        }
        if (options.effectInTable()) {
            EffectTable.reset(JdbcUrls.withoutCerberusParameters(engineUri));
        }
        CheckProgress progress =
                new CheckProgress(settings.out(), true, settings.duration().toNanos(), List.of());
        try (ProgressLine line = progressLine.apply(progress)) {
            return run(title, ledger, progress, line);
        }
    }

    private int run(String title, Path ledger, CheckProgress progress, ProgressLine line) throws Exception {
        List<CheckClient> running = new java.util.concurrent.CopyOnWriteArrayList<>(); // a kill replaces its target
        onExit.add(() -> CheckClient.killAll(running));
        try (HoldLog faultLog = new HoldLog(settings.out().resolve("faults.log"))) {
            epoch = System.nanoTime();
            for (int i = 0; i < settings.clients(); i++) {
                running.add(startClient());
            }
            CheckClient.awaitReady(running);
            FaultInjector.Plan plan = new FaultInjector.Plan(
                    settings.faults(),
                    settings.faultEvery(),
                    settings.serverFaultEvery(),
                    1,
                    settings.pause(),
                    settings.window(),
                    settings.delay(),
                    settings.serverDown(),
                    settings.lease().multipliedBy(2).plusSeconds(1));
            progress.running();
            new FaultInjector(
                            plan,
                            proxies,
                            lockServer,
                            this::startClient,
                            this::runner,
                            (fault, target, clients, log) -> false)
                    .run(
                            running,
                            faultLog,
                            System.nanoTime() + settings.duration().toNanos());
            progress.stopping();
        } finally {
            CheckClient.stopAll(running, proxies, CheckClient.CONFIRM);
        }
        progress.judging();
        long end = System.nanoTime();
        // memcached keeps nothing across a restart, Redis without persistence nothing, H2 may lose commits it answered
        boolean forgets = "memcached".equals(settings.server())
                || "h2".equals(settings.server())
                || (LockServer.REDIS_KINDS.contains(String.valueOf(settings.server()))
                        && settings.persistence().equals("none"));
        List<EffectLedger.Effect> effects = options.effectInTable() ? tableEffects() : EffectLedger.read(ledger);
        IdempotencyReport report =
                new IdempotencyJudge(effects, settings.lease(), forgets, end).judge(HoldLog.readAll(settings.out()));
        String text = report.text(title);
        Files.writeString(settings.out().resolve("report.txt"), text);
        line.close(); // a live line is cleared before the report
        console.print(text.substring(text.indexOf('\n') + 1));
        console.println("report: " + settings.out().resolve("report.txt") + ", "
                + (options.effectInTable() ? "effects: table " + EffectTable.TABLE : "ledger: " + ledger));
        console.flush();
        return report.outcome().exitCode();
    }

    /** @return the effect rows, read once the server answers again (within a minute: a server fault may be ending) */
    private List<EffectLedger.Effect> tableEffects() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (true) {
            try {
                return EffectTable.read(JdbcUrls.withoutCerberusParameters(engineUri));
            } catch (java.sql.SQLException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "cannot read the effects of the run from " + EffectTable.TABLE + ": " + e.getMessage(), e);
                }
                Thread.sleep(200);
            }
        }
    }

    private CheckClient startClient() {
        String name = "c" + (++clientCount);
        String clientUri = proxies == null ? engineUri : proxies.clientUri(name, engineUri);
        Duration step = settings.lease().multipliedBy(KEY_LIFE_IN_LEASES).dividedBy(options.keys);
        List<String> args = List.of(
                "--namespace",
                settings.namespace(),
                "--log",
                settings.out().resolve(name + ".log").toString(),
                "--ledger",
                settings.out().resolve("ledger.txt").toString(),
                "--lease",
                settings.lease().toMillis() + "ms",
                "--think",
                settings.think().toMillis() + "ms",
                "--keys",
                Integer.toString(options.keys),
                "--step",
                Math.max(1, step.toMillis()) + "ms",
                "--epoch",
                Long.toString(epoch),
                "--guard",
                options.guard(),
                "--effect",
                options.effect);
        return CheckClient.start(name, "check-idempotency-worker", args, clientUri);
    }

    /**
     * @return a client that announced an operation less than half a think ago, waiting up to 2 s; else one running
     *     any; else the first to announce one within two leases (after a kill every client may wait a lease on the
     *     killed attempt's key); else any free one
     */
    private CheckClient runner(List<CheckClient> running, java.util.Set<String> busy) throws InterruptedException {
        long start = System.nanoTime();
        long fresh = Math.max(TimeUnit.MILLISECONDS.toNanos(1), settings.think().toNanos() / 2);
        long freshWait = TimeUnit.SECONDS.toNanos(2);
        long anyWait = Math.max(freshWait, settings.lease().multipliedBy(2).toNanos());
        while (System.nanoTime() - start < anyWait) {
            CheckClient stale = null;
            for (CheckClient client : running) {
                if (client.aimable()
                        && !busy.contains(client.name())
                        && client.state().equals("RUN")) {
                    if (System.nanoTime() - client.stateNanos() < fresh) {
                        return client;
                    }
                    stale = client;
                }
            }
            if (stale != null && System.nanoTime() - start >= freshWait) {
                return stale;
            }
            Thread.sleep(1);
        }
        return FaultInjector.anyFree(running, busy);
    }
}
