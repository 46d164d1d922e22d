package io.cerberus.check;

import io.cerberus.check.console.StopOnExit;
import io.cerberus.check.judge.Verdict;
import io.cerberus.check.servers.LockServer;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Optional;

/**
 * {@code cerberus check}, the safety checker: client JVMs loop on a lock (or submit operations
 * through the idempotency guard, {@code --idempotency}) while faults are injected, and a judge
 * reads what they logged. {@link #run} is the whole of it: the options in, the report on
 * {@code out} (and in {@code --out}), the verdict as the exit code.
 */
public final class Check {
    /** Exit code of verdict SAFE, SAFE_WITH_FENCING or DUPLICATES_EXPLAINED. */
    public static final int OK = Verdict.SAFE.exitCode();
    /** Exit code of verdict UNSAFE. */
    public static final int UNSAFE = Verdict.UNSAFE.exitCode();
    /** Exit code of verdict NO_PROGRESS: nothing was shown. */
    public static final int NO_PROGRESS = Verdict.NO_PROGRESS.exitCode();
    /** Exit code of verdict STUCK: a lock was asked for at the end and granted to nobody. */
    public static final int STUCK = Verdict.STUCK.exitCode();

    private Check() {}

    /**
     * The engine the clients use when no {@code --server} is started.
     *
     * @param given the engine the user named ({@code --engine}, {@code CERBERUS_ENGINE}), if any
     * @param uri the engine to use: the one given, else the default one
     * @param namespace the namespace of the clients' locks
     */
    public record Engine(Optional<String> given, String uri, String namespace) {}

    /**
     * Runs a check to its verdict. Servers and clients it started are stopped when it ends, also
     * when a signal ends the JVM first.
     *
     * @param options the parsed options
     * @param engine the engine, unless {@code --server} starts one
     * @param out where the title and the report are printed
     * @param err where the progress line goes
     * @return the exit code of the verdict: {@link #OK}, {@link #UNSAFE}, {@link #NO_PROGRESS} or {@link #STUCK}
     * @throws picocli.CommandLine.ParameterException if the options break a rule
     * @throws Exception if the run cannot be done (an engine that cannot be reached, a server that does not start)
     */
    public static int run(CheckOptions options, Engine engine, PrintWriter out, PrintWriter err) throws Exception {
        options.validate(engine.given());
        if (options.out == null) {
            options.out = Path.of(
                    "cerberus-check-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        }
        Files.createDirectories(options.out);
        // a long run stopped with SIGTERM or Ctrl-C must not leave its servers and clients running
        try (StopOnExit onExit = new StopOnExit("cerberus-check-stop")) {
            LockServer started = options.server == null
                    ? null
                    : onExit.add(LockServer.start(
                            options.server,
                            options.out.resolve("server"),
                            options.persistence,
                            options.jdbcMode,
                            options.pgBouncer,
                            options.lease));
            String uri = started == null
                    ? engine.uri()
                    : options.waitReplicas > 0 ? options.withWaitReplicas(started.uri()) : started.uri();
            options.validateEngine(uri);
            if (options.idempotency.enabled) {
                return new IdempotencyCheck(
                                new IdempotencyCheck.Settings(
                                        engine.namespace(),
                                        options.clients,
                                        options.duration,
                                        options.lease,
                                        options.think,
                                        options.faults,
                                        options.faultEvery,
                                        options.serverFaultEvery(),
                                        options.faultLength(true),
                                        options.faultLength(false),
                                        options.serverDown,
                                        options.delay,
                                        options.out,
                                        options.server,
                                        options.persistence),
                                options.idempotency,
                                started,
                                onExit,
                                out,
                                progress -> options.progressLine(progress, err))
                        .run(uri);
            }
            return new LockCheck(options, engine.namespace(), started, onExit, out, err).run(uri);
        }
    }
}
