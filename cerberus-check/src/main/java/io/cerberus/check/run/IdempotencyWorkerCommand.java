package io.cerberus.check.run;

import io.cerberus.Cerberus;
import io.cerberus.check.console.Durations;
import io.cerberus.check.log.EffectLedger;
import io.cerberus.check.log.EffectTable;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.JdbcUrls;
import io.cerberus.check.recipe.UncheckedRedisGuard;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyCompletionException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyKeyMismatchException;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.ResultCodec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * One client of {@code cerberus check --idempotency}, in its own JVM. It submits operations on a
 * window of {@code --keys} live keys (key {@code n} is live from {@code epoch + n × step} for
 * {@code keys × step}, so every client keeps meeting the same keys while new ones keep coming),
 * each through the guard: claim, announce {@code RUN}, think, apply the effect to the
 * {@link EffectLedger} (or insert it into the {@link EffectTable}, {@code --effect}), complete with a result naming
 * the submission that applied it. As a real
 * client does, it submits the same key again after an {@code OperationInProgressException}, a store
 * that is down, a completion that failed or an operation that failed (one in {@value #FAIL_ONE_IN});
 * it stops retrying a key once it is acknowledged (executed or replayed) or refused. One submission
 * in {@value #MISMATCH_ONE_IN} of a key this client had acknowledged comes with another payload,
 * and must be refused. Every step is logged ({@link HoldLog}, the TOKEN field holds the key):
 * {@code SUBMIT}, {@code CLAIM}, {@code EFFECT}, {@code FAILED}, {@code COMPLETED},
 * {@code COMPLETE_FAILED}, {@code ACK}, {@code REFUSED}, {@code RETRY}, and {@code ENGINE} (timed
 * store calls and store errors, the evidence of network faults). Stops when its input ends.
 */
@Command(
        name = "check-idempotency-worker",
        hidden = true,
        mixinStandardHelpOptions = true,
        description =
                "One client of 'cerberus check --idempotency' (started by the checker; not meant to be run by hand).")
final class IdempotencyWorkerCommand implements Callable<Integer> {
    /** One operation in this many fails on purpose (after its think, before its effect) and releases its key. */
    static final int FAIL_ONE_IN = 10;
    /** One submission in this many of a key already acknowledged reuses the key with another payload. */
    static final int MISMATCH_ONE_IN = 10;

    @Mixin
    private Workers.EngineOption engine;

    @Option(names = "--client", required = true, description = "Name of this client in the logs.")
    private String client;

    @Option(names = "--log", required = true, description = "The event log.")
    private Path logFile;

    @Option(names = "--ledger", required = true, description = "The effect ledger.")
    private Path ledgerFile;

    @Option(names = "--lease", required = true, converter = Durations.class, description = "The guard's lease.")
    private Duration lease;

    @Option(
            names = "--think",
            required = true,
            converter = Durations.class,
            description = "Time an operation takes before its effect.")
    private Duration think;

    @Option(names = "--keys", required = true, description = "Keys live at a time.")
    private int keys;

    @Option(names = "--step", required = true, converter = Durations.class, description = "Time between two new keys.")
    private Duration step;

    @Option(names = "--epoch", required = true, description = "System.nanoTime() of the run's start, in the checker.")
    private long epoch;

    @Option(names = "--guard", required = true, description = "cerberus, none or unchecked.")
    private String guardKind;

    @Option(
            names = "--effect",
            defaultValue = "ledger",
            description = "ledger (a file), table (a row in the operation's transaction, with the record) or"
                    + " table-apart (a row committed on its own, the record after it).")
    private String effect;

    /** The connection of the effect rows ({@code --effect table}, {@code table-apart}), opened when needed. */
    private Connection effects;

    @Spec
    private CommandSpec spec;

    private HoldLog log;
    private EffectLedger ledger;
    private PrintWriter out;
    private final Set<Long> acknowledged = new HashSet<>();

    /** How one submission ended. */
    private enum Ending {
        ACKNOWLEDGED,
        REFUSED,
        RETRY
    }

    @Override
    public Integer call() throws Exception {
        out = spec.commandLine().getOut();
        AtomicBoolean stopped = CheckClient.stoppedWhenInputEnds();
        try (HoldLog events = new HoldLog(logFile);
                EffectLedger effects = effect.equals("ledger") ? new EffectLedger(ledgerFile) : null;
                Cerberus cerberus = guardKind.equals("cerberus")
                        ? CheckClient.connectWhenUp(() -> engine.connect(lease), stopped, events, client)
                        : null;
                IdempotencyGuard guard = cerberus == null
                        ? null
                        : cerberus.idempotency(
                                IdempotencyOptions.defaults().withLease(lease).waitingWhenInProgress(lease));
                UncheckedRedisGuard unchecked =
                        guardKind.equals("unchecked") ? new UncheckedRedisGuard(engine.engineUri(), lease) : null) {
            this.log = events;
            this.ledger = effects;
            announce("READY");
            ThreadLocalRandom random = ThreadLocalRandom.current();
            long operation = 0;
            while (!stopped.get()) {
                long live = Math.max(0, (System.nanoTime() - epoch) / step.toNanos());
                long key = live + random.nextLong(keys);
                boolean other = acknowledged.contains(key) && random.nextInt(MISMATCH_ONE_IN) == 0;
                operation++;
                for (int attempt = 1; !stopped.get(); attempt++) {
                    String submission = client + "-" + operation + "." + attempt;
                    Ending ending = submit(key, other ? "other" : "ok", submission, guard, unchecked);
                    if (ending != Ending.RETRY) {
                        break;
                    }
                    // a real client tries again later, with the same key
                    TimeUnit.MILLISECONDS.sleep(random.nextLong(Math.max(1, lease.toMillis() / 2)));
                }
                // a short, random gap: each key is submitted many times while it is live, by every client
                TimeUnit.MILLISECONDS.sleep(random.nextLong(Math.max(5, think.toMillis() / 5)));
            }
            log.log("END", client, -1, "");
        } finally {
            dropEffectConnection();
        }
        return 0;
    }

    private Ending submit(
            long key, String payload, String submission, IdempotencyGuard guard, UncheckedRedisGuard unchecked)
            throws InterruptedException {
        log.log("SUBMIT", client, key, submission + " " + payload);
        if (guard != null) {
            return guarded(key, payload, submission, guard);
        }
        if (unchecked != null) {
            return unchecked(key, payload, submission, unchecked);
        }
        log.log("CLAIM", client, key, submission);
        if (!run(key, payload, submission)) {
            return Ending.RETRY;
        }
        log.log("COMPLETED", client, key, submission);
        return acknowledge(key, submission, "EXECUTED", submission);
    }

    private Ending guarded(long key, String payload, String submission, IdempotencyGuard guard)
            throws InterruptedException {
        long claiming = System.nanoTime();
        try (IdempotencyAttempt<String> attempt = guard.begin(
                IdempotencyKey.of("check-op", "k" + key, payload), Duration.ofHours(1), ResultCodec.STRING)) {
            log.log(
                    "ENGINE",
                    client,
                    key,
                    "claim " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - claiming) + "ms");
            if (!attempt.mustRun()) {
                return acknowledge(key, submission, "REPLAYED", attempt.replayed());
            }
            log.log("CLAIM", client, key, submission);
            if (!effect.equals("ledger")) {
                return inTable(attempt, key, payload, submission);
            }
            if (!run(key, payload, submission)) {
                attempt.fail(new IllegalStateException("the operation failed (on purpose)"));
                return Ending.RETRY;
            }
            long completing = System.nanoTime();
            try {
                attempt.complete(submission);
            } catch (IdempotencyCompletionException e) {
                log.log("COMPLETE_FAILED", client, key, submission);
                log.log("ENGINE", client, key, "completion failed");
                return retry(key, submission, "completion-failed");
            }
            log.log(
                    "ENGINE",
                    client,
                    key,
                    "complete " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - completing) + "ms");
            log.log("COMPLETED", client, key, submission);
            return acknowledge(key, submission, "EXECUTED", submission);
        } catch (IdempotencyKeyMismatchException e) {
            log.log("REFUSED", client, key, submission);
            announce("FREE");
            return Ending.REFUSED;
        } catch (OperationInProgressException e) {
            return retry(key, submission, "in-progress");
        } catch (IdempotencyStoreUnavailableException e) {
            log.log("ENGINE", client, key, "store unavailable");
            return retry(key, submission, "store-unavailable");
        } catch (RuntimeException e) {
            // a release (fail, close) that could not reach the store, say: the client sees an error and tries again
            log.log("ENGINE", client, key, "error " + e.getClass().getSimpleName());
            return retry(key, submission, "error");
        }
    }

    /**
     * The operation of an attempt that owns its key, its effect a row of the {@link EffectTable}, then its think (the
     * rest of its work, announced {@code RUN}, so that faults aimed at running operations land after the effect): with
     * {@code table} the row and the record commit together after the think ({@link IdempotencyAttempt#completeIn});
     * with {@code table-apart} the row commits before the think and the record is completed after it, on the store's
     * own connection (the negative control). An operation that fails on purpose does so before its effect.
     */
    private Ending inTable(IdempotencyAttempt<String> attempt, long key, String payload, String submission)
            throws InterruptedException {
        if (failedOnPurpose(key, submission)) {
            attempt.fail(new IllegalStateException("the operation failed (on purpose)"));
            return Ending.RETRY;
        }
        boolean together = effect.equals("table");
        boolean committed = false;
        try {
            Connection connection = effectConnection();
            connection.setAutoCommit(false);
            EffectTable.insert(connection, key, submission, client, payload);
            if (!together) {
                connection.commit();
                committed = true;
                log.log("EFFECT", client, key, submission);
            }
            think(key);
            if (together) {
                long completing = System.nanoTime();
                attempt.completeIn(connection, submission);
                connection.commit();
                log.log("EFFECT", client, key, submission);
                logTimed(key, "complete", completing); // the evidence of a cut that held it
            }
        } catch (SQLException | RuntimeException e) {
            dropEffectConnection();
            log.log("ENGINE", client, key, "effect failed " + e.getClass().getSimpleName());
            if (together) {
                attempt.rolledBack(); // frees the key, unless the commit whose answer was lost did commit
            } else if (!committed) {
                attempt.fail(e);
            }
            return retry(key, submission, "effect-failed");
        }
        if (!together) {
            long completing = System.nanoTime();
            try {
                attempt.complete(submission);
                logTimed(key, "complete", completing);
            } catch (IdempotencyCompletionException e) {
                log.log("COMPLETE_FAILED", client, key, submission);
                log.log("ENGINE", client, key, "completion failed");
                return retry(key, submission, "completion-failed");
            }
        }
        log.log("COMPLETED", client, key, submission);
        return acknowledge(key, submission, "EXECUTED", submission);
    }

    /** Logs a timed store call ({@code ENGINE complete 12ms}): a cut that held it until the heal confirms the cut. */
    private void logTimed(long key, String call, long startedNanos) {
        log.log(
                "ENGINE",
                client,
                key,
                call + " " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos) + "ms");
    }

    private Connection effectConnection() throws SQLException {
        if (effects == null) {
            effects = DriverManager.getConnection(
                    JdbcUrls.withTimeouts(JdbcUrls.withoutCerberusParameters(engine.engineUri())));
        }
        return effects;
    }

    /** Drops the effect connection after a failure (rolled back by the server as it closes): the next opens another. */
    private void dropEffectConnection() {
        if (effects != null) {
            try {
                effects.close();
            } catch (SQLException e) {
                // a connection to a server that went away: nothing to keep
            }
            effects = null;
        }
    }

    private Ending unchecked(long key, String payload, String submission, UncheckedRedisGuard unchecked)
            throws InterruptedException {
        UncheckedRedisGuard.Claim claim;
        try {
            claim = unchecked.claim(key, payload, submission, lease);
        } catch (RuntimeException e) {
            log.log("ENGINE", client, key, "error " + e.getClass().getSimpleName());
            return retry(key, submission, "error");
        }
        if (claim instanceof UncheckedRedisGuard.Replay replay) {
            return acknowledge(key, submission, "REPLAYED", replay.result());
        }
        if (claim instanceof UncheckedRedisGuard.Mismatch) {
            log.log("REFUSED", client, key, submission);
            announce("FREE");
            return Ending.REFUSED;
        }
        if (claim instanceof UncheckedRedisGuard.InProgress) {
            return retry(key, submission, "in-progress");
        }
        log.log("CLAIM", client, key, submission);
        try {
            if (!run(key, payload, submission)) {
                unchecked.release(key);
                return Ending.RETRY;
            }
            unchecked.complete(key, payload, submission);
        } catch (RuntimeException e) {
            log.log("ENGINE", client, key, "error " + e.getClass().getSimpleName());
            return retry(key, submission, "error");
        }
        log.log("COMPLETED", client, key, submission);
        return acknowledge(key, submission, "EXECUTED", submission);
    }

    /** @return whether the operation took effect; false when it failed on purpose (after its think, before its effect) */
    private boolean run(long key, String payload, String submission) throws InterruptedException {
        think(key);
        if (failedOnPurpose(key, submission)) {
            return false;
        }
        ledger.apply(key, submission, client, payload);
        log.log("EFFECT", client, key, submission);
        return true;
    }

    /** The operation's work: announced {@code RUN} (faults aim at it), then {@code --think} long. */
    private void think(long key) throws InterruptedException {
        announce("RUN " + key);
        TimeUnit.MILLISECONDS.sleep(think.toMillis());
    }

    /** @return true, logged as a failure to retry, for one operation in {@value #FAIL_ONE_IN} */
    private boolean failedOnPurpose(long key, String submission) {
        if (ThreadLocalRandom.current().nextInt(FAIL_ONE_IN) != 0) {
            return false;
        }
        log.log("FAILED", client, key, submission);
        retry(key, submission, "operation-failed");
        return true;
    }

    private Ending acknowledge(long key, String submission, String status, String result) {
        log.log("ACK", client, key, submission + " " + status + " " + result);
        acknowledged.add(key);
        announce("FREE");
        return Ending.ACKNOWLEDGED;
    }

    private Ending retry(long key, String submission, String why) {
        log.log("RETRY", client, key, submission + " " + why);
        announce("FREE");
        return Ending.RETRY;
    }

    private void announce(String line) {
        out.println(line);
        out.flush();
    }
}
