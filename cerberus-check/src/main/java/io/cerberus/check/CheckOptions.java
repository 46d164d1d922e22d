package io.cerberus.check;

import io.cerberus.check.console.Durations;
import io.cerberus.check.console.ProgressLine;
import io.cerberus.check.report.CheckProgress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
    static final int MAX_PERMITS = 64;
    static final int DEFAULT_PERMITS = 2;

    @Option(
            names = "--clients",
            defaultValue = "3",
            description = "Client processes, 2 to 16. Default: ${DEFAULT-VALUE}")
    int clients;

    @Option(
            names = "--duration",
            defaultValue = "20s",
            converter = Durations.class,
            description = "How long the clients run, 1s to 24h. Default: ${DEFAULT-VALUE}")
    Duration duration;

    @Option(
            names = "--lease",
            defaultValue = "1s",
            converter = Durations.class,
            description = "The clients' lease, at least 100ms. Default: ${DEFAULT-VALUE}")
    Duration lease;

    @Option(
            names = "--think",
            defaultValue = "20ms",
            converter = Durations.class,
            description = "Time between reading and writing the register. Default: ${DEFAULT-VALUE}")
    Duration think;

    @Option(
            names = "--faults",
            split = ",",
            defaultValue = "pause,kill",
            description =
                    "Faults to inject in turn: pause, kill, partition / drop / delay (redis://, zk://, etcd://, memcached:// and jdbc:"
                            + " engines), server-kill (needs --server redis, redlock, postgres, mariadb, h2, zk, etcd or memcached: kills the server, a"
                            + " minority of Redlock's nodes, or one ensemble member), leader-kill (--server zk or etcd: the ensemble's leader),"
                            + " majority-kill (--server redlock: 3 of 5 nodes; zk or etcd: 2 of 3 members), failover (--server sentinel: kills the"
                            + " primary; cluster: kills a master, the masters in turn), failover-unreplicated (--server sentinel: cuts the"
                            + " replica off, lets a client be granted on the primary alone, then kills the primary: the replica is promoted"
                            + " without that grant), switch (--second-engine: every client to the other engine), or none."
                            + " Default: ${DEFAULT-VALUE}")
    List<String> faults;

    @Option(
            names = "--server",
            description = "Start the lock server for the run (instead of --engine): redis, redlock"
                    + " (five redis-servers), sentinel (a primary, a replica, three Sentinels), cluster (a Redis Cluster of three masters"
                    + " with a replica each), postgres (initdb + postgres), mariadb"
                    + " (mariadb-install-db + mariadbd), h2 (H2's TCP server from this command's jar, a file database), zk (a 3-server"
                    + " ZooKeeper ensemble, session timeout = --lease), etcd (a 3-member etcd cluster, lease TTL = --lease in whole"
                    + " seconds, at least 2) or memcached (one memcached with -M; a restart empties it).")
    String server;

    @Option(
            names = "--persistence",
            description =
                    "With --server redis, redlock, sentinel or cluster: none (a restart loses every key, the default) or aof"
                            + " (append-only file, fsync always). With --server h2: delayed (H2's default: a commit reaches the file up"
                            + " to 500 ms later, so a kill may lose it) or commit (WRITE_DELAY=0: written before it is answered).")
    String persistence;

    @Option(
            names = "--wait-replicas",
            defaultValue = "0",
            description =
                    "With --server sentinel or cluster: the engine's waitReplicas, 0 or 1 (a primary or master has one"
                            + " replica). With 1, each grant waits until the replica has it, so a failover cannot lose it."
                            + " Default: ${DEFAULT-VALUE}")
    int waitReplicas;

    @Option(
            names = "--jdbc-mode",
            defaultValue = "lease-row",
            description = "With --server postgres, mariadb or h2: the jdbc: engine's mode, lease-row or session."
                    + " Default: ${DEFAULT-VALUE}")
    String jdbcMode;

    @Option(
            names = "--pgbouncer",
            description =
                    "With --server postgres: a PgBouncer in front of PostgreSQL, in pool mode session or transaction; the"
                            + " clients connect through it (session mode through transaction pooling is refused at start). server-kill"
                            + " kills PostgreSQL behind it.")
    String pgBouncer;

    @Option(
            names = "--delay",
            defaultValue = "300ms",
            converter = Durations.class,
            description =
                    "With --faults delay: added to each direction of the target's traffic. Default: ${DEFAULT-VALUE}")
    Duration delay;

    @Option(
            names = "--server-down",
            defaultValue = "1s",
            converter = Durations.class,
            description = "How long a killed server (a failed-over primary, a killed majority) stays down."
                    + " Default: ${DEFAULT-VALUE}")
    Duration serverDown;

    @Option(
            names = "--fault-length",
            converter = Durations.class,
            description =
                    "How long a pause stops a client, and how long a partition, drop or delay lasts. Default: twice the lease"
                            + " + 200ms, past the lease (with --idempotency a pause lasts half the lease by default: the guard renews every"
                            + " third of it, so a pause shorter than two thirds of the lease must cause no duplicate)")
    Duration faultLength;

    @Option(
            names = "--fault-every",
            defaultValue = "3s",
            converter = Durations.class,
            description = "Time between two faults. Default: ${DEFAULT-VALUE}")
    Duration faultEvery;

    @Option(
            names = "--server-fault-every",
            converter = Durations.class,
            description =
                    "The least time from one server fault's start to the next one's: a server fault whose turn comes sooner is"
                            + " passed over, and the client faults go on (a soak's failovers then leave the engine up most of the time)."
                            + " Default: none, a server fault waits only for the last one to end")
    Duration serverFaultEvery;

    @Option(
            names = "--parallel-faults",
            defaultValue = "1",
            description =
                    "Faults in flight at once, 1 to --clients - 1, each on"
                            + " another client (server faults one at a time): a new fault starts --fault-every after the last one started, not"
                            + " after it ended, so a long run gets many. 1: one after the other, --fault-every apart. Default: ${DEFAULT-VALUE}")
    int parallelFaults;

    @Option(
            names = "--lock",
            defaultValue = "cerberus-check",
            description = "The lock name (with --locks N: the names' prefix,"
                    + " NAME-0 to NAME-N-1). Default: ${DEFAULT-VALUE}")
    String lockName;

    @Option(
            names = "--locks",
            defaultValue = "1",
            description = "How many independent locks, 1 to " + MAX_LOCKS + ", each with a"
                    + " register of its own; each client runs min(N, " + MAX_LOOPS
                    + ") loops, each taking a lock at random per round. The"
                    + " report gives the totals and the worst lock. Default: ${DEFAULT-VALUE}")
    int lockCount;

    @Option(names = "--out", description = "Directory for logs and the report. Default: ./cerberus-check-TIMESTAMP")
    Path out;

    @Option(
            names = "--primitive",
            defaultValue = "lock",
            description =
                    "What the clients take: lock (each loop acquires the lock and releases it), leader (each loop is"
                            + " a participant in electing a leader under the lock's name, acts on the register once per term with"
                            + " the term as its token, then steps down; see --leader-term), or semaphore (each loop takes one"
                            + " permit of a semaphore of --permits under the lock's name and acts on its slot's register, keyed by"
                            + " the permit's fence name and fenced by its token). Default: ${DEFAULT-VALUE}")
    String primitive;

    @Option(
            names = "--permits",
            description = "With --primitive semaphore: the semaphore's permits, 1 to " + MAX_PERMITS + "; never more"
                    + " than this many writers at once, each slot fenced as a lock. Default: " + DEFAULT_PERMITS)
    Integer permits;

    @Option(
            names = "--leader-term",
            converter = Durations.class,
            description =
                    "With --primitive leader: a leader keeps leading and acts on the register again and again (each"
                            + " act a read, --think, a write with its term as the token; none while its leadership is in doubt)"
                            + " until this long after its election, or until it is revoked; then it steps down and contends"
                            + " again. At least 1ms. Default: none, one act per term")
    Duration leaderTerm;

    @Option(
            names = "--register",
            defaultValue = "file",
            description =
                    "Where each lock's register is kept, through the fencing helper users call: file (FencedFile, in"
                            + " --out), sql (FencedRows, a table in the database of --server postgres, mariadb or h2, or of"
                            + " --register-uri) or redis (FencedRedis, a key in the redis-server of --server redis, or of"
                            + " --register-uri). Default: ${DEFAULT-VALUE}")
    String register;

    @Option(
            names = "--register-uri",
            description =
                    "With --register sql or redis: the jdbc: URL or redis:// URI of the registers' store, instead of"
                            + " the server of --server. Its table or keys are replaced at the start.")
    String registerUri;

    @Option(
            names = "--second-engine",
            description = "A second engine the clients are built with (the first is --engine or --server's): --faults"
                    + " switch sends every client to the other engine in turn, a failover and then a fail-back, and the"
                    + " register is written with each lease's fence (epoch and token).")
    String secondEngine;

    @Option(names = "--no-lock", description = "Negative control: the clients take no lock (must be UNSAFE).")
    boolean noLock;

    @Option(
            names = "--no-fencing",
            description =
                    "Negative control: the register ignores fencing tokens (the helper gets the same fence on every call).")
    boolean noFencing;

    @Option(
            names = "--recipe",
            description = "Negative control: the clients take a hand-rolled lock from the classic articles"
                    + " instead of Cerberus's: setnx-expire, setnx-getset, set-nx-px-del, check-then-delete, no-renewal (on --server redis or"
                    + " a redis:// engine), unique-row (a table with a clean-up job; on --server postgres, mariadb or h2, or a jdbc: engine). See SAFETY.md"
                    + " for what each gets wrong.")
    String recipe;

    @Option(
            names = "--progress",
            defaultValue = "auto",
            description = "The status line on standard error while the run goes"
                    + " (elapsed and time left, holds, faults injected and confirmed, what is already unsafe): auto (on a terminal rewritten"
                    + " in place every second, otherwise a plain line every --progress-every), line (a plain line every --progress-every)"
                    + " or none. Standard output carries only the report. Default: ${DEFAULT-VALUE}")
    String progress;

    @Option(
            names = "--progress-every",
            defaultValue = "30s",
            converter = Durations.class,
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
        CheckOptionRules.validateEach(this, explicitEngine);
        idempotency.validate(spec.commandLine(), noLock, noFencing, server, explicitEngine.orElse(null));
        if (idempotency.enabled
                && (recipe != null || given("--locks") || given("--parallel-faults") || given("--lock"))) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--recipe, --lock, --locks and --parallel-faults apply to the lock check, not"
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
        CheckOptionRules.validateEngine(this, engineUri);
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
        return head + (head.contains("?") ? "&" : "?") + "waitReplicas=" + waitReplicas
                + (hash < 0 ? "" : uri.substring(hash));
    }

    /**
     * @param pause for {@code pause} (else for the proxy faults)
     * @return {@code --fault-length}, else twice the lease + 200 ms (past it), for an idempotency check's pause half the lease
     */
    Duration faultLength(boolean pause) {
        if (faultLength != null) {
            return faultLength;
        }
        return pause && idempotency.enabled
                ? lease.dividedBy(2)
                : lease.multipliedBy(2).plusMillis(200);
    }

    /** @return each semaphore's permits with {@code --primitive semaphore}, else 0 (locks) */
    int permits() {
        return !primitive.equals("semaphore") ? 0 : permits == null ? DEFAULT_PERMITS : permits;
    }

    boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }
}
