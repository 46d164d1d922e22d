package io.cerberus.redis;

import io.cerberus.UnsafeEngineException;
import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.Redaction;
import io.lettuce.core.api.async.RedisServerAsyncCommands;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Whether the servers of a Redis engine may evict (delete) its keys before they expire, read from
 * each server that stores them (the one server, every master of a Cluster, every Redlock node) and
 * judged by one rule, when the engine opens and at each health check.
 *
 * <p><b>The rule.</b> Lock keys and idempotency records carry a TTL. Under any
 * {@code maxmemory-policy} other than {@code noeviction}, a server whose memory reaches a non-zero
 * {@code maxmemory} deletes such keys: a lock's key gone before its lease ends lets a second client
 * take the lock while the first still works under it, and a record gone early lets an operation run
 * twice. That is refused ({@link UnsafeEngineException}) unless the user accepted it
 * ({@code acceptEviction=true}), which makes it a warning. The same policy with {@code maxmemory 0}
 * evicts nothing, but one {@code CONFIG SET maxmemory} starts it: a warning. A policy that cannot be
 * read (both commands refused by an ACL, or renamed) is a warning too, never a refusal.
 *
 * <p><b>Reading.</b> {@code INFO memory} (fields {@code maxmemory}, {@code maxmemory_policy}): ACLs
 * and managed services allow it more often than {@code CONFIG}; only when it fails or lacks them,
 * {@code CONFIG GET maxmemory-policy} and {@code CONFIG GET maxmemory}. One round trip per server,
 * all servers at once, each bounded by the command timeout.
 *
 * <p>Thread-safe. What the last check found is kept, so a health check logs only when it changes.
 */
final class EvictionCheck {
    private static final System.Logger LOG = System.getLogger(EvictionCheck.class.getName());
    static final String NO_EVICTION = "noeviction";

    /**
     * What one server runs, or why it could not be read.
     *
     * @param server which server, for messages ("the server", "master 10.0.0.5:6379")
     * @param policy its {@code maxmemory-policy}, or null when unread
     * @param maxmemory its {@code maxmemory} in bytes (0: no limit)
     * @param problem why it could not be read, or null
     */
    record Reading(String server, String policy, long maxmemory, String problem) {
        static Reading of(String server, String policy, long maxmemory) {
            return new Reading(server, policy, maxmemory, null);
        }

        static Reading unreadable(String server, String problem) {
            return new Reading(server, null, 0, problem);
        }

        boolean readable() {
            return problem == null;
        }

        /** @return what decides the verdict, so a change of it (and nothing else) is logged */
        String state() {
            return server + ": "
                    + (!readable()
                            ? "unreadable"
                            : policy + (maxmemory > 0 ? " with a maxmemory" : " without a maxmemory"));
        }

        String runs() {
            return server + " runs maxmemory-policy " + policy + " with maxmemory " + maxmemory
                    + (maxmemory == 0 ? "" : " bytes");
        }
    }

    /** What one check found: the servers refused (empty when none), the warnings, and the state to log changes of. */
    private record Verdict(List<Reading> refused, List<String> warnings, Set<String> state) {}

    private final String engine;
    private final boolean accepted;
    private final Object guard = new Object();
    private Set<String> lastState;

    /**
     * @param engine "redis engine URI" or "redlock engine URI", the URI redacted
     * @param accepted whether eviction was accepted ({@code acceptEviction=true})
     */
    EvictionCheck(String engine, boolean accepted) {
        this.engine = engine;
        this.accepted = accepted;
    }

    /**
     * Reads one server's eviction policy. Never fails: a server that refuses both ways, or does
     * not answer within {@code timeout}, gives an unreadable reading.
     *
     * @param server which server, for messages
     * @param commands its connection
     * @param timeout the longest to wait for it
     * @return the reading, within {@code timeout}
     */
    static CompletableFuture<Reading> read(
            String server, RedisServerAsyncCommands<String, String> commands, Duration timeout) {
        CompletableFuture<String> info;
        try {
            info = commands.info("memory").toCompletableFuture();
        } catch (RuntimeException e) {
            info = CompletableFuture.failedFuture(e);
        }
        return info.handle((text, failure) -> {
                    Reading reading = failure == null ? fromInfo(server, text) : null;
                    if (reading != null) {
                        return CompletableFuture.completedFuture(reading);
                    }
                    String infoProblem =
                            "INFO memory: " + (failure == null ? "no maxmemory_policy field" : message(failure));
                    return fromConfig(server, commands, infoProblem);
                })
                .thenCompose(reading -> reading)
                .completeOnTimeout(
                        Reading.unreadable(server, "no answer within " + Durations.format(timeout)),
                        timeout.toNanos(),
                        TimeUnit.NANOSECONDS);
    }

    /**
     * @param pending readings from {@link #read}, each bounded by its timeout
     * @return the readings
     */
    private static List<Reading> await(List<CompletableFuture<Reading>> pending) {
        List<Reading> readings = new ArrayList<>(pending.size());
        for (CompletableFuture<Reading> reading : pending) {
            readings.add(reading.join());
        }
        return readings;
    }

    private static Reading fromInfo(String server, String info) {
        String policy = null;
        Long maxmemory = null;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("maxmemory_policy:")) {
                policy = line.substring("maxmemory_policy:".length()).trim();
            } else if (line.startsWith("maxmemory:")) {
                try {
                    maxmemory =
                            Long.parseLong(line.substring("maxmemory:".length()).trim());
                } catch (NumberFormatException e) {
                    return null;
                }
            }
        }
        return policy == null || policy.isEmpty() || maxmemory == null ? null : Reading.of(server, policy, maxmemory);
    }

    private static CompletableFuture<Reading> fromConfig(
            String server, RedisServerAsyncCommands<String, String> commands, String infoProblem) {
        try {
            // one parameter per CONFIG GET: servers before Redis 7 take only one
            CompletableFuture<Map<String, String>> policy =
                    commands.configGet("maxmemory-policy").toCompletableFuture();
            CompletableFuture<Map<String, String>> maxmemory =
                    commands.configGet("maxmemory").toCompletableFuture();
            return policy.thenCombine(maxmemory, (p, m) -> {
                        String name = p.get("maxmemory-policy");
                        String bytes = m.get("maxmemory");
                        return name == null || bytes == null
                                ? Reading.unreadable(
                                        server, infoProblem + "; CONFIG GET: no maxmemory-policy or maxmemory")
                                : Reading.of(server, name, Long.parseLong(bytes));
                    })
                    .exceptionally(
                            failure -> Reading.unreadable(server, infoProblem + "; CONFIG GET: " + message(failure)));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(
                    Reading.unreadable(server, infoProblem + "; CONFIG GET: " + message(e)));
        }
    }

    /** @return the message of a failed command, without the wrapping of the future */
    static String message(Throwable failure) {
        Throwable cause =
                failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        return Redaction.redact(String.valueOf(cause.getMessage()));
    }

    /**
     * Judges the servers when the engine opens, and logs a WARNING for each warning.
     *
     * @param readings one per server, from {@link #read}
     * @throws UnsafeEngineException if a server may evict keys and that was not accepted
     */
    void atOpen(List<CompletableFuture<Reading>> readings) {
        Verdict verdict = judge(await(readings));
        if (!verdict.refused().isEmpty()) {
            throw new UnsafeEngineException(refusal(verdict.refused(), false));
        }
        synchronized (guard) {
            lastState = verdict.state();
        }
        verdict.warnings().forEach(warning -> LOG.log(Level.WARNING, warning));
    }

    /**
     * Judges the servers again, for a health check; logs only when what it finds changed since
     * the last check (or the open).
     *
     * @param readings one per server, from {@link #read}
     * @return the warnings, empty when every server runs {@code noeviction}
     * @throws UnsafeEngineException if a server may evict keys now and that was not accepted
     */
    List<String> atHealthCheck(List<CompletableFuture<Reading>> readings) {
        Verdict verdict = judge(await(readings));
        boolean changed;
        synchronized (guard) {
            changed = !verdict.state().equals(lastState);
            lastState = verdict.state();
        }
        String refusal = verdict.refused().isEmpty() ? null : refusal(verdict.refused(), true);
        if (changed) {
            if (refusal != null) {
                LOG.log(Level.ERROR, refusal);
            }
            verdict.warnings().forEach(warning -> LOG.log(Level.WARNING, warning));
            if (refusal == null && verdict.warnings().isEmpty()) {
                LOG.log(Level.INFO, () -> engine + ": every server runs maxmemory-policy " + NO_EVICTION + " now");
            }
        }
        if (refusal != null) {
            throw new UnsafeEngineException(refusal);
        }
        return verdict.warnings();
    }

    private Verdict judge(List<Reading> readings) {
        List<Reading> refused = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        Set<String> state = new LinkedHashSet<>();
        for (Reading reading : readings) {
            state.add(reading.state());
            if (!reading.readable()) {
                warnings.add(engine + ": could not read the eviction policy of " + reading.server() + " ("
                        + reading.problem()
                        + "); if it evicts keys, a lock may have two holders and an operation may run twice. Where the commands"
                        + " are refused, allow the engine's user INFO (+info); make sure the server runs maxmemory-policy "
                        + NO_EVICTION);
            } else if (reading.policy().equals(NO_EVICTION)) {
                continue;
            } else if (reading.maxmemory() == 0) {
                warnings.add(engine + ": " + reading.runs() + ": nothing is evicted now, but setting a maxmemory"
                        + " (CONFIG SET maxmemory) would start evicting lock keys and idempotency records before they expire;"
                        + " set maxmemory-policy " + NO_EVICTION);
            } else if (accepted) {
                warnings.add(
                        engine + ": " + reading.runs()
                                + ", accepted with acceptEviction=true: when memory is full Redis"
                                + " may delete lock keys and idempotency records before they expire; an evicted hold is reported lost"
                                + " (possibly after another client took the lock), an evicted record lets its operation run again");
            } else {
                refused.add(reading);
            }
        }
        return new Verdict(List.copyOf(refused), List.copyOf(warnings), Set.copyOf(state));
    }

    private String refusal(List<Reading> refused, boolean sinceOpen) {
        List<String> runs = refused.stream().map(Reading::runs).toList();
        return engine
                + (sinceOpen
                        ? " is no longer safe: since it opened (a failover to a server set up otherwise, or a"
                                + " CONFIG SET) "
                        : " is refused: ")
                + String.join("; ", runs) + ". When memory reaches maxmemory, Redis"
                + " then evicts keys (those with a TTL under volatile-*, any key under allkeys-*), and lock keys and idempotency"
                + " records carry a TTL: a lock's key deleted before its lease ends lets a second client take the lock while"
                + " the first still holds it (two holders), and an idempotency record deleted early lets its operation run"
                + " twice. Set maxmemory-policy " + NO_EVICTION + " on the server (CONFIG SET maxmemory-policy "
                + NO_EVICTION
                + ", and in its configuration), or accept the risk with the URI parameter acceptEviction=true"
                + " (RedisOptions.builder().acceptEviction(true)), which makes this a warning; an evicted hold is then reported"
                + " lost at its next renewal";
    }
}
