package io.cerberus.cli;

import io.cerberus.Cerberus;
import io.cerberus.spi.support.Redaction;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code cerberus check}: the safety checker. K client JVMs loop on one lock (or on N, each with its
 * own, {@code --locks}) around a fenced register while faults are injected; the event logs are then
 * judged for overlapping holds, lost updates and fencing tokens going backwards (see
 * {@link SafetyChecker}).
 */
@Command(name = "check",
        header = "Runs clients against one lock under faults and judges mutual exclusion.",
        mixinStandardHelpOptions = true,
        versionProvider = CerberusCommand.Version.class,
        description = {"Starts --clients client processes that loop: acquire the lock, read a register, wait --think, write"
                + " the value + 1 with the lease's fencing token, release. The register (a file) refuses writes with a token"
                + " lower than one it has seen. Meanwhile faults are injected every --fault-every: 'pause' stops the current"
                + " holder with SIGSTOP for twice the lease, then SIGCONT; 'kill' kills it with SIGKILL and starts a new client;"
                + " 'partition', 'drop' and 'delay' blackhole, reset or slow its connection through a proxy of its own; with --server,"
                + " 'server-kill', 'leader-kill', 'majority-kill', 'failover' and 'failover-unreplicated' fault the server the checker"
                + " runs."
                + " The report (report.txt, timeline.html in --out) counts overlapping holds, stale writes stopped by fencing,"
                + " lost updates and tokens going backwards. Verdict SAFE, SAFE_WITH_FENCING (holders overlapped but fencing"
                + " refused every stale write), UNSAFE, or NO_PROGRESS (no client held the lock: nothing was shown)."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:verdict SAFE or SAFE_WITH_FENCING", "1:verdict UNSAFE: lost updates or tokens backwards",
                "2:verdict NO_PROGRESS: no client held the lock during the run",
                "3:verdict STUCK: clients asked for a lock at the end of the run and nobody was granted it",
                ExitCodes.USAGE_LINE, ExitCodes.UNAVAILABLE_LINE, ExitCodes.UNSAFE_LINE, ExitCodes.INTERNAL_LINE})
final class CheckCommand implements Callable<Integer> {
    /** Exit code of an UNSAFE verdict. */
    static final int UNSAFE = 1;
    /** Exit code of a run in which no client held the lock. */
    static final int NO_PROGRESS = 2;
    /** Exit code of a run in which a lock was asked for at the end and granted to nobody. */
    static final int STUCK = 3;
    private static final int MAX_LOCKS = 10_000;
    private static final int MAX_LOOPS = 8;

    @Mixin
    private EngineOptions engine;

    @Option(names = "--clients", defaultValue = "3", description = "Client processes, 2 to 16. Default: ${DEFAULT-VALUE}")
    private int clients;

    @Option(names = "--duration", defaultValue = "20s", converter = Durations.class,
            description = "How long the clients run, 1s to 24h. Default: ${DEFAULT-VALUE}")
    private Duration duration;

    @Option(names = "--lease", defaultValue = "1s", converter = Durations.class,
            description = "The clients' lease, at least 100ms. Default: ${DEFAULT-VALUE}")
    private Duration lease;

    @Option(names = "--think", defaultValue = "20ms", converter = Durations.class,
            description = "Time between reading and writing the register. Default: ${DEFAULT-VALUE}")
    private Duration think;

    @Option(names = "--faults", split = ",", defaultValue = "pause,kill",
            description = "Faults to inject in turn: pause, kill, partition / drop / delay (redis://, zk://, etcd://, memcached:// and jdbc:"
                    + " engines), server-kill (needs --server redis, redlock, postgres, mariadb, h2, zk, etcd or memcached: kills the server, a"
                    + " minority of Redlock's nodes, or one ensemble member), leader-kill (--server zk or etcd: the ensemble's leader),"
                    + " majority-kill (--server redlock: 3 of 5 nodes; zk or etcd: 2 of 3 members), failover (--server sentinel: kills the"
                    + " primary; cluster: kills a master, the masters in turn), failover-unreplicated (--server sentinel: cuts the"
                    + " replica off, lets a client be granted on the primary alone, then kills the primary: the replica is promoted"
                    + " without that grant), or none."
                    + " Default: ${DEFAULT-VALUE}")
    private List<String> faults;

    @Option(names = "--server", description = "Start the lock server for the run (instead of --engine): redis, redlock"
            + " (five redis-servers), sentinel (a primary, a replica, three Sentinels), cluster (a Redis Cluster of three masters"
            + " with a replica each), postgres (initdb + postgres), mariadb"
            + " (mariadb-install-db + mariadbd), h2 (H2's TCP server from this command's jar, a file database), zk (a 3-server"
            + " ZooKeeper ensemble, session timeout = --lease), etcd (a 3-member etcd cluster, lease TTL = --lease in whole"
            + " seconds, at least 2) or memcached (one memcached with -M; a restart empties it).")
    private String server;

    @Option(names = "--persistence",
            description = "With --server redis, redlock, sentinel or cluster: none (a restart loses every key, the default) or aof"
                    + " (append-only file, fsync always). With --server h2: delayed (H2's default: a commit reaches the file up"
                    + " to 500 ms later, so a kill may lose it) or commit (WRITE_DELAY=0: written before it is answered).")
    private String persistence;

    @Option(names = "--wait-replicas", defaultValue = "0",
            description = "With --server sentinel or cluster: the engine's waitReplicas, 0 or 1 (a primary or master has one"
                    + " replica). With 1, each grant waits until the replica has it, so a failover cannot lose it."
                    + " Default: ${DEFAULT-VALUE}")
    private int waitReplicas;

    @Option(names = "--jdbc-mode", defaultValue = "lease-row",
            description = "With --server postgres, mariadb or h2: the jdbc: engine's mode, lease-row or session."
                    + " Default: ${DEFAULT-VALUE}")
    private String jdbcMode;

    @Option(names = "--pgbouncer",
            description = "With --server postgres: a PgBouncer in front of PostgreSQL, in pool mode session or transaction; the"
                    + " clients connect through it (session mode through transaction pooling is refused at start). server-kill"
                    + " kills PostgreSQL behind it.")
    private String pgBouncer;

    @Option(names = "--delay", defaultValue = "300ms", converter = Durations.class,
            description = "With --faults delay: added to each direction of the target's traffic. Default: ${DEFAULT-VALUE}")
    private Duration delay;

    @Option(names = "--server-down", defaultValue = "1s", converter = Durations.class,
            description = "How long a killed server (a failed-over primary, a killed majority) stays down."
                    + " Default: ${DEFAULT-VALUE}")
    private Duration serverDown;

    @Option(names = "--fault-length", converter = Durations.class,
            description = "How long a pause stops a client, and how long a partition, drop or delay lasts. Default: twice the lease"
                    + " + 200ms, past the lease (with --idempotency a pause lasts half the lease by default: the guard renews every"
                    + " third of it, so a pause shorter than two thirds of the lease must cause no duplicate)")
    private Duration faultLength;

    @Option(names = "--fault-every", defaultValue = "3s", converter = Durations.class,
            description = "Time between two faults. Default: ${DEFAULT-VALUE}")
    private Duration faultEvery;

    @Option(names = "--server-fault-every", converter = Durations.class,
            description = "The least time from one server fault's start to the next one's: a server fault whose turn comes sooner is"
                    + " passed over, and the client faults go on (a soak's failovers then leave the engine up most of the time)."
                    + " Default: none, a server fault waits only for the last one to end")
    private Duration serverFaultEvery;

    @Option(names = "--parallel-faults", defaultValue = "1", description = "Faults in flight at once, 1 to --clients - 1, each on"
            + " another client (server faults one at a time): a new fault starts --fault-every after the last one started, not"
            + " after it ended, so a long run gets many. 1: one after the other, --fault-every apart. Default: ${DEFAULT-VALUE}")
    private int parallelFaults;

    @Option(names = "--lock", defaultValue = "cerberus-check", description = "The lock name (with --locks N: the names' prefix,"
            + " NAME-0 to NAME-N-1). Default: ${DEFAULT-VALUE}")
    private String lockName;

    @Option(names = "--locks", defaultValue = "1", description = "How many independent locks, 1 to " + MAX_LOCKS + ", each with a"
            + " register of its own; each client runs min(N, " + MAX_LOOPS + ") loops, each taking a lock at random per round. The"
            + " report gives the totals and the worst lock. Default: ${DEFAULT-VALUE}")
    private int lockCount;

    @Option(names = "--out", description = "Directory for logs and the report. Default: ./cerberus-check-TIMESTAMP")
    private Path out;

    @Option(names = "--no-lock", description = "Negative control: the clients take no lock (must be UNSAFE).")
    private boolean noLock;

    @Option(names = "--no-fencing", description = "Negative control: the register ignores fencing tokens.")
    private boolean noFencing;

    @Option(names = "--recipe", description = "Negative control: the clients take a hand-rolled lock from the classic articles"
            + " instead of Cerberus's: setnx-expire, setnx-getset, set-nx-px-del, check-then-delete, no-renewal (on --server redis or"
            + " a redis:// engine), unique-row (a table with a clean-up job; on --server postgres, mariadb or h2, or a jdbc: engine). See SAFETY.md"
            + " for what each gets wrong.")
    private String recipe;

    @Option(names = "--progress", defaultValue = "auto", description = "The status line on standard error while the run goes"
            + " (elapsed and time left, holds, faults injected and confirmed, what is already unsafe): auto (on a terminal rewritten"
            + " in place every second, otherwise a plain line every --progress-every), line (a plain line every --progress-every)"
            + " or none. Standard output carries only the report. Default: ${DEFAULT-VALUE}")
    private String progress;

    @Option(names = "--progress-every", defaultValue = "30s", converter = Durations.class,
            description = "How often a plain progress line is printed, at least 1s. Default: ${DEFAULT-VALUE}")
    private Duration progressEvery;

    @Mixin
    private IdempotencyCheckOptions idempotency;

    @Spec
    private CommandSpec spec;

    private int clientCount;
    private ClientProxies proxies;
    private String engineUri;
    private LockServer lockServer;
    private StopOnExit onExit;

    @Override
    public Integer call() throws Exception {
        validate();
        idempotency.validate(spec.commandLine(), noLock, noFencing, server, engine.explicitEngine().orElse(null));
        if (idempotency.enabled && (recipe != null || given("--locks") || given("--parallel-faults") || given("--lock"))) {
            throw new ParameterException(spec.commandLine(), "--recipe, --lock, --locks and --parallel-faults apply to the lock check, not"
                    + " to --idempotency");
        }
        if (out == null) {
            out = Path.of("cerberus-check-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        }
        Files.createDirectories(out);
        // a long run stopped with SIGTERM or Ctrl-C must not leave its servers and clients running
        try (StopOnExit onExit = new StopOnExit("cerberus-check-stop")) {
            this.onExit = onExit;
            LockServer started = server == null ? null : onExit.add(LockServer.start(server, out.resolve("server"), persistence, jdbcMode,
                    pgBouncer, lease));
            this.lockServer = started;
            return run(started == null ? engine.engineUri() : waitReplicas > 0 ? withWaitReplicas(started.uri()) : started.uri());
        }
    }

    private int run(String engineUri) throws Exception {
        List<String> proxied = faults.stream().filter(ClientProxies.FAULTS::contains).toList();
        if (!proxied.isEmpty() && !ClientProxies.proxiable(engineUri)) {
            throw new ParameterException(spec.commandLine(), "--faults " + String.join(",", proxied) + " works with redis://, zk://, etcd://,"
                    + " memcached:// and jdbc: engines (each client talks to each server through its own proxy); the engine is " + Redaction.redact(engineUri));
        }
        if (recipe != null && !Recipe.runsOn(recipe, engineUri)) {
            throw new ParameterException(spec.commandLine(), "--recipe " + recipe + " needs " + Recipe.needs(recipe) + "; the engine is "
                    + Redaction.redact(engineUri));
        }
        if (idempotency.enabled) {
            return new IdempotencyCheck(new IdempotencyCheck.Settings(engine.namespace(), clients, duration, lease, think, faults, faultEvery,
                    serverFaultEvery(), faultLength(true), faultLength(false), serverDown, delay, out, server, persistence), idempotency, lockServer, onExit, spec.commandLine().getOut(),
                    this::progressLine).run(engineUri);
        }
        proxies = proxied.isEmpty() ? null : new ClientProxies(out);
        if (!noLock) {
            Cerberus probe = engine.connect(engineUri, lease); // fails early, with a clear message, when the engine is unreachable
            probe.close();
        }
        CheckLocks locks = new CheckLocks(lockName, out.resolve("register"), lockCount);
        for (int lock = 0; lock < lockCount; lock++) {
            FencedRegister.create(locks.register(lock), !noFencing);
        }
        PrintWriter console = spec.commandLine().getOut();
        String title = "cerberus check: " + (noLock ? "no lock" : (recipe == null ? "" : "recipe " + recipe + " on ") + Redaction.redact(engineUri))
                + (lockServer == null ? "" : " (started here" + (LockServer.persistenceOf(server).isEmpty() ? "" : ", persistence " + persistence)
                + (pgBouncer == null ? "" : ", through PgBouncer pool_mode=" + pgBouncer) + ")")
                + ", " + clients + " clients" + (lockCount > 1 ? " on " + lockCount + " locks" : "") + ", " + Durations.format(duration) + ", lease " + Durations.format(lease) + ", faults " + faults
                + (faults.contains("delay") ? " (delay " + Durations.format(delay) + ")" : "")
                + (faultLength != null ? ", each pause or cut lasting " + Durations.format(faultLength) : "")
                + (serverFaultEvery != null ? ", a server fault at most every " + Durations.format(serverFaultEvery) : "") + (noFencing ? ", fencing ignored" : "");
        console.println(title);
        console.flush();
        CheckProgress progress = new CheckProgress(out, false, duration.toNanos(), locks.registers(!noFencing));
        try (ProgressLine line = progressLine(progress)) {
            return run(engineUri, locks, title, console, progress, line);
        }
    }

    private int run(String engineUri, CheckLocks locks, String title, PrintWriter console, CheckProgress progress, ProgressLine line)
            throws Exception {
        List<CheckClient> running = new CopyOnWriteArrayList<>();
        onExit.add(() -> CheckClient.killAll(running));
        long stopping = 0; // a kill replaces its target while other faults run
        long start = System.nanoTime();
        try (HoldLog faultLog = new HoldLog(out.resolve("faults.log"))) {
            for (int i = 0; i < clients; i++) {
                running.add(startClient(engineUri));
            }
            this.engineUri = engineUri;
            CheckClient.awaitReady(running);
            // the duration counts from when every client runs: starting JVMs on a busy machine must not eat it
            Duration window = faultLength(false);
            FaultInjector.Plan plan = new FaultInjector.Plan(faults, faultEvery, serverFaultEvery(), parallelFaults, window, window, delay, serverDown,
                    lease.multipliedBy(2).plusSeconds(1));
            progress.running();
            new FaultInjector(plan, proxies, lockServer, () -> startClient(engineUri), this::holder, this::ownFault)
                    .run(running, faultLog, System.nanoTime() + duration.toNanos());
            stopping = System.nanoTime();
            progress.stopping();
        } finally {
            CheckClient.stopAll(running, proxies, FaultInjector.CONFIRM);
        }
        progress.judging();
        long end = System.nanoTime();
        List<FencedRegister.State> registers = locks.registers(!noFencing).stream().map(FencedRegister::read).toList();
        // a lock asked for and granted to nobody for ten leases (at least 5 s) at the end is stuck: no engine keeps one that long
        SafetyChecker.Stuck stuck = new SafetyChecker.Stuck(stopping, Math.max(lease.multipliedBy(10).toNanos(), TimeUnit.SECONDS.toNanos(5)));
        SafetyChecker.Report report = SafetyChecker.judge(HoldLog.readAll(out), registers, locks.names(), start, end, stuck);
        String text = CheckReport.text(title, report);
        Files.writeString(out.resolve("report.txt"), text);
        CheckReport.html(out.resolve("timeline.html"), title, report);
        line.close(); // a live line is cleared before the report
        console.print(text.substring(text.indexOf('\n') + 1));
        console.println("report: " + out.resolve("report.txt") + ", timeline: " + out.resolve("timeline.html"));
        console.flush();
        return switch (report.verdict()) {
            case "UNSAFE" -> UNSAFE;
            case "NO_PROGRESS" -> NO_PROGRESS;
            case "STUCK" -> STUCK;
            default -> ExitCodes.OK;
        };
    }

    /** @return the run's status line as {@code --progress} asks, on standard error; close it before the report */
    private ProgressLine progressLine(CheckProgress progress) {
        return ProgressLine.start(this.progress, progressEvery, spec.commandLine().getErr(), progress::text);
    }

    /** @return {@code --server-fault-every}, or zero when not given */
    private Duration serverFaultEvery() {
        return serverFaultEvery == null ? Duration.ZERO : serverFaultEvery;
    }

    private void validate() {
        try {
            ProgressLine.check(progress, progressEvery);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        if (clients < 2 || clients > 16) {
            throw new ParameterException(spec.commandLine(), "--clients must be 2 to 16, was " + clients);
        }
        if (parallelFaults < 1 || parallelFaults > clients - 1) {
            throw new ParameterException(spec.commandLine(), "--parallel-faults must be 1 to --clients - 1 (" + (clients - 1)
                    + ": one client is always left unfaulted), was " + parallelFaults);
        }
        if (lockCount < 1 || lockCount > MAX_LOCKS) {
            throw new ParameterException(spec.commandLine(), "--locks must be 1 to " + MAX_LOCKS + ", was " + lockCount);
        }
        if (duration.compareTo(Duration.ofSeconds(1)) < 0 || duration.compareTo(Duration.ofHours(24)) > 0) {
            throw new ParameterException(spec.commandLine(), "--duration must be 1s to 24h, was " + Durations.format(duration));
        }
        if (lease.compareTo(Duration.ofMillis(100)) < 0) {
            throw new ParameterException(spec.commandLine(), "--lease must be at least 100ms, was " + Durations.format(lease));
        }
        if (faultLength != null && faultLength.compareTo(Duration.ofMillis(1)) < 0) {
            throw new ParameterException(spec.commandLine(), "--fault-length must be at least 1ms, was " + Durations.format(faultLength));
        }
        if (serverFaultEvery != null && (serverFaultEvery.isNegative() || faults.stream().noneMatch(LockServer.FAULTS::contains))) {
            throw new ParameterException(spec.commandLine(), "--server-fault-every needs a server fault in --faults ("
                    + String.join(", ", LockServer.FAULTS) + ") and a duration of 0 or more, was " + Durations.format(serverFaultEvery));
        }
        if (faultEvery.compareTo(Duration.ofMillis(100)) < 0) {
            throw new ParameterException(spec.commandLine(), "--fault-every must be at least 100ms, was " + Durations.format(faultEvery));
        }
        List<String> known = Stream.concat(FaultInjector.KINDS.stream(), Stream.of("none")).toList();
        for (String fault : faults) {
            if (!known.contains(fault)) {
                throw new ParameterException(spec.commandLine(), "--faults takes " + String.join(", ", known) + "; '" + fault
                        + "' is none of them");
            }
        }
        if (server != null && !LockServer.KINDS.contains(server)) {
            throw new ParameterException(spec.commandLine(), "--server takes " + String.join(", ", LockServer.KINDS) + ", was '" + server + "'");
        }
        for (String fault : faults) {
            if (LockServer.FAULTS.contains(fault) && (server == null || !LockServer.faultsOf(server).contains(fault))) {
                String kinds = LockServer.KINDS.stream().filter(kind -> LockServer.faultsOf(kind).contains(fault)).map(kind -> "--server " + kind)
                        .collect(Collectors.joining(", ")).replaceFirst(", (?!.*, )", " or ");
                throw new ParameterException(spec.commandLine(), "--faults " + fault + " needs " + kinds + ", so the checker runs the server"
                        + " it faults" + (LockServer.REPLICATED_KINDS.contains(String.valueOf(server)) && fault.equals("server-kill")
                        ? "; with --server " + server + (server.equals("sentinel") ? " the primary is" : " the masters are")
                        + " killed by --faults failover" : ""));
            }
        }
        if (recipe != null && !Recipe.NAMES.contains(recipe)) {
            throw new ParameterException(spec.commandLine(), "--recipe takes " + String.join(", ", Recipe.NAMES) + "; '" + recipe
                    + "' is none of them");
        }
        if (recipe != null && noLock) {
            throw new ParameterException(spec.commandLine(), "give --recipe or --no-lock, not both: each is a negative control of its own");
        }
        if (faults.contains("between-steps") && (recipe == null || Recipe.failpoint(recipe).isEmpty())) {
            throw new ParameterException(spec.commandLine(), "--faults between-steps needs --recipe setnx-expire (the client dies between"
                    + " SETNX and PEXPIRE) or --recipe check-then-delete (it stalls between GET and DEL)");
        }
        if (recipe != null && server != null && !Recipe.runsOn(recipe, LockServer.uriScheme(server))) {
            throw new ParameterException(spec.commandLine(), "--recipe " + recipe + " needs " + Recipe.needs(recipe) + "; --server "
                    + server + " is not one");
        }
        if (server != null && engine.explicitEngine().isPresent()) {
            throw new ParameterException(spec.commandLine(), "give --server or --engine, not both: --server starts the engine's server");
        }
        List<String> persistences = server == null ? List.of() : LockServer.persistenceOf(server);
        if (persistence != null && persistences.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--persistence applies to --server redis, redlock, sentinel, cluster and h2"
                    + (server == null ? "" : "; --server " + server + ("memcached".equals(server) ? " keeps nothing across a restart"
                    : " keeps its own data")));
        }
        if (persistence != null && !persistences.contains(persistence)) {
            throw new ParameterException(spec.commandLine(), "--persistence takes " + String.join(" or ", persistences) + " with --server "
                    + server + ", was '" + persistence + "'");
        }
        if (persistence == null) {
            persistence = persistences.isEmpty() ? "none" : persistences.get(0);
        }
        if (waitReplicas < 0 || waitReplicas > 1) {
            throw new ParameterException(spec.commandLine(), "--wait-replicas must be 0 or 1 (--server sentinel and cluster run one"
                    + " replica of each primary), was " + waitReplicas);
        }
        if (given("--wait-replicas") && !LockServer.REPLICATED_KINDS.contains(String.valueOf(server))) {
            throw new ParameterException(spec.commandLine(), "--wait-replicas applies to --server sentinel and cluster; with --engine,"
                    + " give waitReplicas in the URI");
        }
        if (!List.of("lease-row", "session").contains(jdbcMode)) {
            throw new ParameterException(spec.commandLine(), "--jdbc-mode takes lease-row or session, was '" + jdbcMode + "'");
        }
        if (given("--jdbc-mode") && !LockServer.JDBC_KINDS.contains(String.valueOf(server))) {
            throw new ParameterException(spec.commandLine(), "--jdbc-mode applies to --server postgres, mariadb and h2; with --engine, give"
                    + " the mode in the URI (cerberus.mode=session)");
        }
        if (pgBouncer != null && !CheckDatabase.PGBOUNCER_MODES.contains(pgBouncer)) {
            throw new ParameterException(spec.commandLine(), "--pgbouncer takes " + String.join(" or ", CheckDatabase.PGBOUNCER_MODES)
                    + ", was '" + pgBouncer + "'");
        }
        if (pgBouncer != null && !"postgres".equals(server)) {
            throw new ParameterException(spec.commandLine(), "--pgbouncer applies to --server postgres; with --engine, give PgBouncer's"
                    + " address in the URI");
        }
        if (delay.isZero()) {
            throw new ParameterException(spec.commandLine(), "--delay must be more than 0; to inject no delay, leave delay out of --faults");
        }
        if (given("--delay") && !faults.contains("delay")) {
            throw new ParameterException(spec.commandLine(), "--delay applies to --faults delay");
        }
        if (LockServer.REPLICATED_KINDS.contains(String.valueOf(server)) && faults.stream().anyMatch(ClientProxies.FAULTS::contains)) {
            throw new ParameterException(spec.commandLine(), "--faults partition, drop and delay need the servers in the engine URI; the"
                    + " clients of --server " + server + (server.equals("sentinel")
                    ? " ask the Sentinels where the primary is and connect to it" : " learn the nodes from the cluster and connect to them")
                    + " directly");
        }
    }

    /**
     * @return a {@code redis-sentinel://} or {@code redis-cluster://} URI with {@code waitReplicas} among its parameters,
     *     before any {@code #MASTER}
     */
    private String withWaitReplicas(String uri) {
        int hash = uri.indexOf('#');
        String head = hash < 0 ? uri : uri.substring(0, hash);
        return head + (head.contains("?") ? "&" : "?") + "waitReplicas=" + waitReplicas + (hash < 0 ? "" : uri.substring(hash));
    }

    /**
     * @param pause for {@code pause} (else for the proxy faults)
     * @return {@code --fault-length}, else twice the lease + 200 ms (past it), for an idempotency check's pause half the lease
     */
    private Duration faultLength(boolean pause) {
        if (faultLength != null) {
            return faultLength;
        }
        return pause && idempotency.enabled ? lease.dividedBy(2) : lease.multipliedBy(2).plusMillis(200);
    }

    private boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    private CheckClient startClient(String engineUri) {
        String name = "c" + (++clientCount);
        String clientUri = proxies == null ? engineUri : proxies.clientUri(name, engineUri);
        List<String> args = new ArrayList<>(List.of("--namespace", engine.namespace(), "--lock", lockName,
                "--register", out.resolve("register").toString(), "--log", out.resolve(name + ".log").toString(),
                "--lease", lease.toMillis() + "ms", "--think", think.toMillis() + "ms",
                "--locks", Integer.toString(lockCount), "--loops", Integer.toString(Math.min(lockCount, MAX_LOOPS))));
        if (noLock) {
            args.add("--no-lock");
        }
        if (noFencing) {
            args.add("--no-fencing");
        }
        if (recipe != null) {
            args.addAll(List.of("--recipe", recipe, "--armed", armedFile(name).toString()));
        }
        return CheckClient.start(name, args, clientUri);
    }

    /** @return the file whose existence arms a client's recipe failpoint */
    private Path armedFile(String client) {
        return out.resolve("armed-" + client);
    }

    /**
     * Arms the recipe's failpoint on one client and waits until a loop of it has reached it: it died there (then a new
     * client takes its place) or stalled there for twice the lease and went on.
     */
    private boolean ownFault(String fault, CheckClient target, List<CheckClient> running, HoldLog faultLog) throws Exception {
        if (!fault.equals("between-steps")) {
            return false;
        }
        betweenSteps(target, running, faultLog);
        return true;
    }

    private void betweenSteps(CheckClient target, List<CheckClient> running, HoldLog faultLog) throws Exception {
        Recipe.FailpointAction action = Recipe.failpoint(recipe).orElseThrow();
        faultLog.log("FAULT", target.name(), -1, "between-steps");
        Files.createFile(armedFile(target.name()));
        Path log = out.resolve(target.name() + ".log");
        String evidence = action == Recipe.FailpointAction.CRASH ? "failpoint crash" : "failpoint stall over";
        long deadline = System.nanoTime() + lease.multipliedBy(2).plus(FaultInjector.CONFIRM).toNanos();
        while (HoldLog.read(log).stream().noneMatch(event -> event.detail().equals(evidence))) {
            if (System.nanoTime() - deadline > 0) {
                Files.deleteIfExists(armedFile(target.name()));
                faultLog.log("FAULT", target.name(), -1, "unconfirmed between-steps: " + target.name() + " never reached the failpoint");
                return;
            }
            Thread.sleep(10);
        }
        if (action == Recipe.FailpointAction.CRASH) {
            target.kill(FaultInjector.CONFIRM); // it halted itself: this only waits for its end
            faultLog.log("FAULT", target.name(), -1, "confirmed between-steps: crashed between the recipe's two commands");
            running.remove(target);
            running.add(startClient(engineUri));
        } else {
            faultLog.log("FAULT", target.name(), -1, "confirmed between-steps: stalled between the recipe's two commands");
        }
    }

    /**
     * @param busy clients under a fault now, passed over
     * @return the client in its critical section (read done), else one holding, waiting up to ten leases (at least 2 s)
     *     for one, as after a server fault nobody may hold for seconds; else any free one
     */
    private CheckClient holder(List<CheckClient> running, Set<String> busy) throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(TimeUnit.SECONDS.toNanos(2), lease.multipliedBy(10).toNanos());
        while (System.nanoTime() - deadline < 0) {
            for (String wanted : List.of("READ", "HOLD")) {
                for (CheckClient client : running) {
                    if (client.aimable() && !busy.contains(client.name()) && client.state().equals(wanted)) {
                        return client;
                    }
                }
            }
            Thread.sleep(1);
        }
        return FaultInjector.anyFree(running, busy);
    }
}
