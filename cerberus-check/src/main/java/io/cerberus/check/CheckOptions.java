package io.cerberus.check;

import io.cerberus.check.console.Durations;
import io.cerberus.check.console.ProgressLine;
import io.cerberus.check.fault.ClientProxies;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.recipe.Recipe;
import io.cerberus.check.report.CheckProgress;
import io.cerberus.check.servers.CheckDatabase;
import io.cerberus.check.servers.LockServer;
import io.cerberus.spi.support.Redaction;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The options of {@code cerberus check}, a picocli mixin of the command that runs it, and the rules
 * of their combinations: {@link #validate} refuses a bad command line before anything starts, with
 * a {@link ParameterException} naming the rule (the command's usage error). The values are read by
 * the run ({@link Check#run}).
 */
public final class CheckOptions {
    static final int MAX_LOCKS = 10_000;
    static final int MAX_LOOPS = 8;

    @Option(names = "--clients", defaultValue = "3", description = "Client processes, 2 to 16. Default: ${DEFAULT-VALUE}")
    int clients;

    @Option(names = "--duration", defaultValue = "20s", converter = Durations.class,
            description = "How long the clients run, 1s to 24h. Default: ${DEFAULT-VALUE}")
    Duration duration;

    @Option(names = "--lease", defaultValue = "1s", converter = Durations.class,
            description = "The clients' lease, at least 100ms. Default: ${DEFAULT-VALUE}")
    Duration lease;

    @Option(names = "--think", defaultValue = "20ms", converter = Durations.class,
            description = "Time between reading and writing the register. Default: ${DEFAULT-VALUE}")
    Duration think;

    @Option(names = "--faults", split = ",", defaultValue = "pause,kill",
            description = "Faults to inject in turn: pause, kill, partition / drop / delay (redis://, zk://, etcd://, memcached:// and jdbc:"
                    + " engines), server-kill (needs --server redis, redlock, postgres, mariadb, h2, zk, etcd or memcached: kills the server, a"
                    + " minority of Redlock's nodes, or one ensemble member), leader-kill (--server zk or etcd: the ensemble's leader),"
                    + " majority-kill (--server redlock: 3 of 5 nodes; zk or etcd: 2 of 3 members), failover (--server sentinel: kills the"
                    + " primary; cluster: kills a master, the masters in turn), failover-unreplicated (--server sentinel: cuts the"
                    + " replica off, lets a client be granted on the primary alone, then kills the primary: the replica is promoted"
                    + " without that grant), or none."
                    + " Default: ${DEFAULT-VALUE}")
    List<String> faults;

    @Option(names = "--server", description = "Start the lock server for the run (instead of --engine): redis, redlock"
            + " (five redis-servers), sentinel (a primary, a replica, three Sentinels), cluster (a Redis Cluster of three masters"
            + " with a replica each), postgres (initdb + postgres), mariadb"
            + " (mariadb-install-db + mariadbd), h2 (H2's TCP server from this command's jar, a file database), zk (a 3-server"
            + " ZooKeeper ensemble, session timeout = --lease), etcd (a 3-member etcd cluster, lease TTL = --lease in whole"
            + " seconds, at least 2) or memcached (one memcached with -M; a restart empties it).")
    String server;

    @Option(names = "--persistence",
            description = "With --server redis, redlock, sentinel or cluster: none (a restart loses every key, the default) or aof"
                    + " (append-only file, fsync always). With --server h2: delayed (H2's default: a commit reaches the file up"
                    + " to 500 ms later, so a kill may lose it) or commit (WRITE_DELAY=0: written before it is answered).")
    String persistence;

    @Option(names = "--wait-replicas", defaultValue = "0",
            description = "With --server sentinel or cluster: the engine's waitReplicas, 0 or 1 (a primary or master has one"
                    + " replica). With 1, each grant waits until the replica has it, so a failover cannot lose it."
                    + " Default: ${DEFAULT-VALUE}")
    int waitReplicas;

    @Option(names = "--jdbc-mode", defaultValue = "lease-row",
            description = "With --server postgres, mariadb or h2: the jdbc: engine's mode, lease-row or session."
                    + " Default: ${DEFAULT-VALUE}")
    String jdbcMode;

    @Option(names = "--pgbouncer",
            description = "With --server postgres: a PgBouncer in front of PostgreSQL, in pool mode session or transaction; the"
                    + " clients connect through it (session mode through transaction pooling is refused at start). server-kill"
                    + " kills PostgreSQL behind it.")
    String pgBouncer;

    @Option(names = "--delay", defaultValue = "300ms", converter = Durations.class,
            description = "With --faults delay: added to each direction of the target's traffic. Default: ${DEFAULT-VALUE}")
    Duration delay;

    @Option(names = "--server-down", defaultValue = "1s", converter = Durations.class,
            description = "How long a killed server (a failed-over primary, a killed majority) stays down."
                    + " Default: ${DEFAULT-VALUE}")
    Duration serverDown;

    @Option(names = "--fault-length", converter = Durations.class,
            description = "How long a pause stops a client, and how long a partition, drop or delay lasts. Default: twice the lease"
                    + " + 200ms, past the lease (with --idempotency a pause lasts half the lease by default: the guard renews every"
                    + " third of it, so a pause shorter than two thirds of the lease must cause no duplicate)")
    Duration faultLength;

    @Option(names = "--fault-every", defaultValue = "3s", converter = Durations.class,
            description = "Time between two faults. Default: ${DEFAULT-VALUE}")
    Duration faultEvery;

    @Option(names = "--server-fault-every", converter = Durations.class,
            description = "The least time from one server fault's start to the next one's: a server fault whose turn comes sooner is"
                    + " passed over, and the client faults go on (a soak's failovers then leave the engine up most of the time)."
                    + " Default: none, a server fault waits only for the last one to end")
    Duration serverFaultEvery;

    @Option(names = "--parallel-faults", defaultValue = "1", description = "Faults in flight at once, 1 to --clients - 1, each on"
            + " another client (server faults one at a time): a new fault starts --fault-every after the last one started, not"
            + " after it ended, so a long run gets many. 1: one after the other, --fault-every apart. Default: ${DEFAULT-VALUE}")
    int parallelFaults;

    @Option(names = "--lock", defaultValue = "cerberus-check", description = "The lock name (with --locks N: the names' prefix,"
            + " NAME-0 to NAME-N-1). Default: ${DEFAULT-VALUE}")
    String lockName;

    @Option(names = "--locks", defaultValue = "1", description = "How many independent locks, 1 to " + MAX_LOCKS + ", each with a"
            + " register of its own; each client runs min(N, " + MAX_LOOPS + ") loops, each taking a lock at random per round. The"
            + " report gives the totals and the worst lock. Default: ${DEFAULT-VALUE}")
    int lockCount;

    @Option(names = "--out", description = "Directory for logs and the report. Default: ./cerberus-check-TIMESTAMP")
    Path out;

    @Option(names = "--no-lock", description = "Negative control: the clients take no lock (must be UNSAFE).")
    boolean noLock;

    @Option(names = "--no-fencing", description = "Negative control: the register ignores fencing tokens.")
    boolean noFencing;

    @Option(names = "--recipe", description = "Negative control: the clients take a hand-rolled lock from the classic articles"
            + " instead of Cerberus's: setnx-expire, setnx-getset, set-nx-px-del, check-then-delete, no-renewal (on --server redis or"
            + " a redis:// engine), unique-row (a table with a clean-up job; on --server postgres, mariadb or h2, or a jdbc: engine). See SAFETY.md"
            + " for what each gets wrong.")
    String recipe;

    @Option(names = "--progress", defaultValue = "auto", description = "The status line on standard error while the run goes"
            + " (elapsed and time left, holds, faults injected and confirmed, what is already unsafe): auto (on a terminal rewritten"
            + " in place every second, otherwise a plain line every --progress-every), line (a plain line every --progress-every)"
            + " or none. Standard output carries only the report. Default: ${DEFAULT-VALUE}")
    String progress;

    @Option(names = "--progress-every", defaultValue = "30s", converter = Durations.class,
            description = "How often a plain progress line is printed, at least 1s. Default: ${DEFAULT-VALUE}")
    Duration progressEvery;

    @Mixin
    IdempotencyCheckOptions idempotency;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    /**
     * Checks the options and their combinations, before anything is started.
     *
     * @param explicitEngine the engine given with {@code --engine} or {@code CERBERUS_ENGINE}, if any
     * @throws ParameterException naming the rule the command line breaks
     */
    void validate(Optional<String> explicitEngine) {
        validateEach(explicitEngine);
        idempotency.validate(spec.commandLine(), noLock, noFencing, server, explicitEngine.orElse(null));
        if (idempotency.enabled && (recipe != null || given("--locks") || given("--parallel-faults") || given("--lock"))) {
            throw new ParameterException(spec.commandLine(), "--recipe, --lock, --locks and --parallel-faults apply to the lock check, not"
                    + " to --idempotency");
        }
    }

    /**
     * Checks what the options ask of the engine the clients will use, once it is known.
     *
     * @param engineUri the engine URI (of {@code --engine}, or of the server started)
     * @throws ParameterException when a fault or a recipe asked for cannot run on it
     */
    void validateEngine(String engineUri) {
        List<String> proxied = faults.stream().filter(ClientProxies.FAULTS::contains).toList();
        if (!proxied.isEmpty() && !ClientProxies.proxiable(engineUri)) {
            throw new ParameterException(spec.commandLine(), "--faults " + String.join(",", proxied) + " works with redis://, zk://, etcd://,"
                    + " memcached:// and jdbc: engines (each client talks to each server through its own proxy); the engine is " + Redaction.redact(engineUri));
        }
        if (recipe != null && !Recipe.runsOn(recipe, engineUri)) {
            throw new ParameterException(spec.commandLine(), "--recipe " + recipe + " needs " + Recipe.needs(recipe) + "; the engine is "
                    + Redaction.redact(engineUri));
        }
    }

    private void validateEach(Optional<String> explicitEngine) {
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
        if (server != null && explicitEngine.isPresent()) {
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

    /** @return the run's status line as {@code --progress} asks, on standard error; close it before the report */
    ProgressLine progressLine(CheckProgress progress, java.io.PrintWriter err) {
        return ProgressLine.start(this.progress, progressEvery, err, progress::text);
    }

    /** @return {@code --server-fault-every}, or zero when not given */
    Duration serverFaultEvery() {
        return serverFaultEvery == null ? Duration.ZERO : serverFaultEvery;
    }

    /**
     * @return a {@code redis-sentinel://} or {@code redis-cluster://} URI with {@code waitReplicas} among its parameters,
     *     before any {@code #MASTER}
     */
    String withWaitReplicas(String uri) {
        int hash = uri.indexOf('#');
        String head = hash < 0 ? uri : uri.substring(0, hash);
        return head + (head.contains("?") ? "&" : "?") + "waitReplicas=" + waitReplicas + (hash < 0 ? "" : uri.substring(hash));
    }

    /**
     * @param pause for {@code pause} (else for the proxy faults)
     * @return {@code --fault-length}, else twice the lease + 200 ms (past it), for an idempotency check's pause half the lease
     */
    Duration faultLength(boolean pause) {
        if (faultLength != null) {
            return faultLength;
        }
        return pause && idempotency.enabled ? lease.dividedBy(2) : lease.multipliedBy(2).plusMillis(200);
    }

    boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }
}
