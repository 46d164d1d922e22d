package io.cerberus.check;

import io.cerberus.check.console.Durations;
import io.cerberus.check.console.ProgressLine;
import io.cerberus.check.fault.ClientProxies;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.log.Registers;
import io.cerberus.check.recipe.Recipe;
import io.cerberus.check.servers.CheckDatabase;
import io.cerberus.check.servers.LockServer;
import io.cerberus.spi.support.Redaction;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.ParameterException;

/**
 * The rules of {@code cerberus check}'s options one by one and in combination, each broken rule a
 * {@link ParameterException} naming it (the command's usage error); {@link CheckOptions} calls them
 * before anything starts, and once the engine is known.
 */
final class CheckOptionRules {
    private CheckOptionRules() {}

    /**
     * Checks what the options ask of the engine the clients will use, once it is known.
     *
     * @param engineUri the engine URI (of {@code --engine}, or of the server started)
     * @throws ParameterException when a fault or a recipe asked for cannot run on it
     */
    static void validateEngine(CheckOptions options, String engineUri) {
        List<String> proxied =
                options.faults.stream().filter(ClientProxies.FAULTS::contains).toList();
        if (!proxied.isEmpty() && !ClientProxies.proxiable(engineUri)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--faults " + String.join(",", proxied) + " works with redis://, zk://, etcd://,"
                            + " memcached:// and jdbc: engines (each client talks to each server through its own proxy); the engine is "
                            + Redaction.redact(engineUri));
        }
        if (options.recipe != null && !Recipe.runsOn(options.recipe, engineUri)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--recipe " + options.recipe + " needs " + Recipe.needs(options.recipe) + "; the engine is "
                            + Redaction.redact(engineUri));
        }
    }

    static void validateEach(CheckOptions options, Optional<String> explicitEngine) {
        try {
            ProgressLine.check(options.progress, options.progressEvery);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(options.spec.commandLine(), e.getMessage());
        }
        if (options.clients < 2 || options.clients > 16) {
            throw new ParameterException(
                    options.spec.commandLine(), "--clients must be 2 to 16, was " + options.clients);
        }
        if (options.parallelFaults < 1 || options.parallelFaults > options.clients - 1) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--parallel-faults must be 1 to --clients - 1 (" + (options.clients - 1)
                            + ": one client is always left unfaulted), was " + options.parallelFaults);
        }
        if (options.lockCount < 1 || options.lockCount > CheckOptions.MAX_LOCKS) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--locks must be 1 to " + CheckOptions.MAX_LOCKS + ", was " + options.lockCount);
        }
        if (options.duration.compareTo(Duration.ofSeconds(1)) < 0
                || options.duration.compareTo(Duration.ofHours(24)) > 0) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--duration must be 1s to 24h, was " + Durations.format(options.duration));
        }
        if (options.lease.compareTo(Duration.ofMillis(100)) < 0) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--lease must be at least 100ms, was " + Durations.format(options.lease));
        }
        if (options.faultLength != null && options.faultLength.compareTo(Duration.ofMillis(1)) < 0) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--fault-length must be at least 1ms, was " + Durations.format(options.faultLength));
        }
        if (options.serverFaultEvery != null
                && (options.serverFaultEvery.isNegative()
                        || options.faults.stream().noneMatch(LockServer.FAULTS::contains))) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--server-fault-every needs a server fault in --faults (" + String.join(", ", LockServer.FAULTS)
                            + ") and a duration of 0 or more, was " + Durations.format(options.serverFaultEvery));
        }
        if (options.faultEvery.compareTo(Duration.ofMillis(100)) < 0) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--fault-every must be at least 100ms, was " + Durations.format(options.faultEvery));
        }
        List<String> known =
                Stream.concat(FaultInjector.KINDS.stream(), Stream.of("none")).toList();
        for (String fault : options.faults) {
            if (!known.contains(fault)) {
                throw new ParameterException(
                        options.spec.commandLine(),
                        "--faults takes " + String.join(", ", known) + "; '" + fault + "' is none of them");
            }
        }
        if (options.server != null && !LockServer.KINDS.contains(options.server)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--server takes " + String.join(", ", LockServer.KINDS) + ", was '" + options.server + "'");
        }
        for (String fault : options.faults) {
            if (LockServer.FAULTS.contains(fault)
                    && (options.server == null
                            || !LockServer.faultsOf(options.server).contains(fault))) {
                String kinds = LockServer.KINDS.stream()
                        .filter(kind -> LockServer.faultsOf(kind).contains(fault))
                        .map(kind -> "--server " + kind)
                        .collect(Collectors.joining(", "))
                        .replaceFirst(", (?!.*, )", " or ");
                throw new ParameterException(
                        options.spec.commandLine(),
                        "--faults " + fault + " needs " + kinds + ", so the checker runs the server"
                                + " it faults"
                                + (LockServer.REPLICATED_KINDS.contains(String.valueOf(options.server))
                                                && fault.equals("server-kill")
                                        ? "; with --server " + options.server
                                                + (options.server.equals("sentinel")
                                                        ? " the primary is"
                                                        : " the masters are")
                                                + " killed by --faults failover"
                                        : ""));
            }
        }
        if (options.recipe != null && !Recipe.NAMES.contains(options.recipe)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--recipe takes " + String.join(", ", Recipe.NAMES) + "; '" + options.recipe + "' is none of them");
        }
        if (!List.of("lock", "leader", "semaphore").contains(options.primitive)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--primitive takes lock, leader or semaphore; '" + options.primitive + "' is none of them");
        }
        if (options.primitive.equals("semaphore") && options.recipe != null) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--primitive semaphore takes Cerberus's permits; --recipe replaces Cerberus's lock: give one or the"
                            + " other (--no-lock and --no-fencing are the semaphore's negative controls)");
        }
        if (options.primitive.equals("leader") && (options.recipe != null || options.noLock)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--primitive leader elects with Cerberus; --recipe and --no-lock replace Cerberus: give one or the"
                            + " other");
        }
        validatePermits(options);
        if (options.leaderTerm != null && !options.primitive.equals("leader")) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--leader-term applies to --primitive leader: how long an elected leader keeps acting");
        }
        if (options.leaderTerm != null && options.leaderTerm.compareTo(Duration.ofMillis(1)) < 0) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--leader-term must be at least 1ms, was " + Durations.format(options.leaderTerm)
                            + "; for one act per term, leave it out");
        }
        if (options.recipe != null && options.noLock) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "give --recipe or --no-lock, not both: each is a negative control of its own");
        }
        if (options.faults.contains("between-steps")
                && (options.recipe == null || Recipe.failpoint(options.recipe).isEmpty())) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--faults between-steps needs --recipe setnx-expire (the client dies between"
                            + " SETNX and PEXPIRE) or --recipe check-then-delete (it stalls between GET and DEL)");
        }
        if (options.recipe != null
                && options.server != null
                && !Recipe.runsOn(options.recipe, LockServer.uriScheme(options.server))) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--recipe " + options.recipe + " needs " + Recipe.needs(options.recipe) + "; --server "
                            + options.server + " is not one");
        }
        if (options.server != null && explicitEngine.isPresent()) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "give --server or --engine, not both: --server starts the engine's server");
        }
        List<String> persistences = options.server == null ? List.of() : LockServer.persistenceOf(options.server);
        if (options.persistence != null && persistences.isEmpty()) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--persistence applies to --server redis, redlock, sentinel, cluster and h2"
                            + (options.server == null
                                    ? ""
                                    : "; --server " + options.server
                                            + ("memcached".equals(options.server)
                                                    ? " keeps nothing across a restart"
                                                    : " keeps its own data")));
        }
        if (options.persistence != null && !persistences.contains(options.persistence)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--persistence takes " + String.join(" or ", persistences) + " with --server " + options.server
                            + ", was '" + options.persistence + "'");
        }
        if (options.persistence == null) {
            options.persistence = persistences.isEmpty() ? "none" : persistences.get(0);
        }
        validateRegister(options);
        validateSecondEngine(options);
        if (options.waitReplicas < 0 || options.waitReplicas > 1) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--wait-replicas must be 0 or 1 (--server sentinel and cluster run one"
                            + " replica of each primary), was " + options.waitReplicas);
        }
        if (options.given("--wait-replicas") && !LockServer.REPLICATED_KINDS.contains(String.valueOf(options.server))) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--wait-replicas applies to --server sentinel and cluster; with --engine,"
                            + " give waitReplicas in the URI");
        }
        if (!List.of("lease-row", "session").contains(options.jdbcMode)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--jdbc-mode takes lease-row or session, was '" + options.jdbcMode + "'");
        }
        if (options.given("--jdbc-mode") && !LockServer.JDBC_KINDS.contains(String.valueOf(options.server))) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--jdbc-mode applies to --server postgres, mariadb and h2; with --engine, give"
                            + " the mode in the URI (cerberus.mode=session)");
        }
        if (options.pgBouncer != null && !CheckDatabase.PGBOUNCER_MODES.contains(options.pgBouncer)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--pgbouncer takes " + String.join(" or ", CheckDatabase.PGBOUNCER_MODES) + ", was '"
                            + options.pgBouncer + "'");
        }
        if (options.pgBouncer != null && !"postgres".equals(options.server)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--pgbouncer applies to --server postgres; with --engine, give PgBouncer's"
                            + " address in the URI");
        }
        if (options.delay.isZero()) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--delay must be more than 0; to inject no delay, leave delay out of --faults");
        }
        if (options.given("--delay") && !options.faults.contains("delay")) {
            throw new ParameterException(options.spec.commandLine(), "--delay applies to --faults delay");
        }
        if (LockServer.REPLICATED_KINDS.contains(String.valueOf(options.server))
                && options.faults.stream().anyMatch(ClientProxies.FAULTS::contains)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--faults partition, drop and delay need the servers in the engine URI; the"
                            + " clients of --server " + options.server
                            + (options.server.equals("sentinel")
                                    ? " ask the Sentinels where the primary is and connect to it"
                                    : " learn the nodes from the cluster and connect to them")
                            + " directly");
        }
    }

    /** {@code --primitive semaphore} and {@code --permits}: how many permits, and a register per slot. */
    private static void validatePermits(CheckOptions options) {
        if (options.permits != null && !options.primitive.equals("semaphore")) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--permits applies to --primitive semaphore: how many permits the clients' semaphore has");
        }
        int permits = options.permits();
        if (options.permits != null && (permits < 1 || permits > CheckOptions.MAX_PERMITS)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--permits must be 1 to " + CheckOptions.MAX_PERMITS + ", was " + permits);
        }
        if (permits > 0 && (long) permits * options.lockCount > CheckOptions.MAX_LOCKS) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--locks times --permits must be at most " + CheckOptions.MAX_LOCKS + " (a register per slot), was "
                            + options.lockCount + " x " + permits);
        }
        if (permits > 0 && options.idempotency.enabled) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--primitive semaphore applies to the lock check, not to --idempotency");
        }
    }

    /** {@code --register} and {@code --register-uri}: where the registers are, and whether a run's faults keep them. */
    private static void validateRegister(CheckOptions options) {
        if (!Registers.STORES.contains(options.register)) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--register takes " + String.join(", ", Registers.STORES) + ", was '" + options.register + "'");
        }
        if (options.register.equals("file")) {
            if (options.registerUri != null) {
                throw new ParameterException(
                        options.spec.commandLine(), "--register-uri applies to --register sql and redis");
            }
            return;
        }
        if (options.idempotency.enabled) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--register applies to the lock check; --idempotency keeps its own ledger");
        }
        String scheme = options.register.equals("sql") ? "jdbc:" : "redis://";
        List<String> servers = options.register.equals("sql") ? LockServer.JDBC_KINDS : List.of("redis");
        if (options.registerUri != null) {
            if (!options.registerUri.startsWith(scheme)) {
                throw new ParameterException(
                        options.spec.commandLine(),
                        "--register " + options.register + " takes a " + scheme + " --register-uri, was "
                                + Redaction.redact(options.registerUri));
            }
            return;
        }
        if (!servers.contains(String.valueOf(options.server))) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--register " + options.register + " keeps the registers in the server of --server "
                            + String.join(", ", servers).replaceFirst(", (?!.*, )", " or ")
                            + ", or where --register-uri (a " + scheme + " URI) says");
        }
        boolean serverKilled = options.faults.contains("server-kill");
        if (serverKilled && options.server.equals("redis") && !options.persistence.equals("aof")) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--register redis with --faults server-kill needs --persistence aof: a redis-server restarted"
                            + " without it has lost the registers");
        }
        if (serverKilled && options.server.equals("h2") && !options.persistence.equals("commit")) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--register sql on --server h2 with --faults server-kill needs --persistence commit: with H2's"
                            + " write delay a killed server loses the registers' last writes");
        }
    }

    /** {@code --second-engine} and {@code --faults switch}: a failover and a fail-back between two engines. */
    private static void validateSecondEngine(CheckOptions options) {
        boolean switches = options.faults.contains("switch");
        if (switches && options.secondEngine == null) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--faults switch needs --second-engine URI: the engine the clients switch to and back");
        }
        if (options.secondEngine == null) {
            return;
        }
        if (options.idempotency.enabled
                || options.recipe != null
                || options.noLock
                || !options.primitive.equals("lock")) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--second-engine applies to the lock check with Cerberus's locks (not --idempotency, --recipe,"
                            + " --no-lock, --primitive leader or semaphore)");
        }
        if (!switches) {
            throw new ParameterException(
                    options.spec.commandLine(),
                    "--second-engine needs switch in --faults: the clients use it only when switched to it");
        }
    }
}
