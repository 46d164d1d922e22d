package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.ManagedProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Automatic failover and fail-back under load, across processes: two {@link FailoverWorker}
 * child JVMs, four threads each, take one lock of a client with a {@code primary} and a
 * {@code standby} engine in a loop and increment a {@link FencedCounterFile} under it. The primary
 * server is killed while threads wait, then restarted.
 *
 * <p>Asserted: both processes move to the standby and, after the restart, back to the primary
 * within {@code failBackAfter} and a bound; from the kill on, and around the fail-back, the
 * longest time in which no thread of either process is granted the lock is at most
 * {@code unhealthyFor + checkEvery + lock-delay + 1 s} (the lock-delay: the longest lease the
 * engine switched away from granted, at least the default lease); the counter equals the
 * increments both processes had accepted (no update lost to two holders at once). An engine module
 * extends this with its primary server (which it can kill and restart) and a standby URI; the
 * figures are printed so they can be quoted. Bounds scale with {@link TestTimes}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class AbstractFailoverAcrossProcessesTest {
    private static final int PROCESSES = 2;
    private static final int THREADS_PER_PROCESS = 4;
    /** Each attempt's wait: far longer than the bound, so a wait that does not follow the switch shows as a gap. */
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Grants each process must see on an engine before a phase counts as reached. */
    private static final int GRANTS_PER_PHASE = 10;

    private final List<ManagedProcess> workers = new ArrayList<>();

    /** @return the primary engine's URI, reachable from child JVMs; its server is up when the test starts */
    protected abstract String primaryUri();

    /** Kills the primary server (SIGKILL: no goodbye to its clients) and waits until it is gone. */
    protected abstract void killPrimary();

    /**
     * Starts the primary server again at the same URI and waits until it serves. Its fencing tokens
     * must go on growing (a server that keeps its data, or one whose counters start from its clock):
     * the counter refuses a token smaller than one the primary gave before the kill.
     */
    protected abstract void restartPrimary();

    /** @return the standby engine's URI, reachable from child JVMs, up for the whole test */
    protected abstract String standbyUri();

    /** @return the workers' default lease: the least lock-delay of a switch (tuning hook) */
    protected Duration defaultLease() {
        return Duration.ofSeconds(1);
    }

    /** @return {@code FailoverPolicy.after(..)} of the workers (tuning hook) */
    protected Duration unhealthyFor() {
        return Duration.ofMillis(500);
    }

    /** @return {@code FailoverPolicy.checkEvery(..)} of the workers (tuning hook) */
    protected Duration checkEvery() {
        return Duration.ofMillis(100);
    }

    /** @return {@code FailoverPolicy.failBackAfter(..)} of the workers (tuning hook) */
    protected Duration failBackAfter() {
        return Duration.ofSeconds(1);
    }

    /**
     * Tuning hook: how long after {@link #restartPrimary()} returns the workers' clients may take
     * to reach the primary again (a client library's reconnect back-off), before
     * {@link #failBackAfter()} starts counting.
     *
     * @return the allowance
     */
    protected Duration reconnectAllowance() {
        return Duration.ofSeconds(1);
    }

    /**
     * Tuning hook: the workers' {@code connectTimeout(..)}, which bounds one call to an engine. The
     * default is the client's; the failover gap must not depend on it when a server dies, as its
     * connections close at once.
     *
     * @return the timeout
     */
    protected Duration connectTimeout() {
        return io.cerberus.CerberusBuilder.DEFAULT_CONNECT_TIMEOUT;
    }

    @AfterEach
    void stopWorkers() {
        workers.forEach(ManagedProcess::close);
    }

    /** What a worker answered to {@code STATUS}. */
    private record Status(String current, long primaryGrants, long standbyGrants) {
        static Status of(ManagedProcess worker) {
            worker.send("STATUS");
            String[] fields =
                    worker.awaitLine("STATUS ", TestTimes.millis(10_000)).split(" ");
            return new Status(
                    fields[1].substring("current=".length()),
                    Long.parseLong(fields[2].substring("primary=".length())),
                    Long.parseLong(fields[3].substring("standby=".length())));
        }
    }

    @Test
    void killOfThePrimaryAndFailBackKeepGrantingWithinTheLockDelayAndLoseNoUpdate(@TempDir Path dir)
            throws IOException {
        Path counter = dir.resolve("counter");
        String namespace = "failover-" + UUID.randomUUID().toString().substring(0, 8);
        for (int i = 0; i < PROCESSES; i++) {
            workers.add(ManagedProcess.startJavaWithEngines(
                    FailoverWorker.class,
                    primaryUri(),
                    standbyUri(),
                    namespace,
                    "counter",
                    counter.toString(),
                    dir.resolve("result-" + i).toString(),
                    Integer.toString(THREADS_PER_PROCESS),
                    Long.toString(defaultLease().toMillis()),
                    Long.toString(WAIT.toMillis()),
                    Long.toString(unhealthyFor().toMillis()),
                    Long.toString(checkEvery().toMillis()),
                    Long.toString(failBackAfter().toMillis()),
                    Long.toString(connectTimeout().toMillis())));
        }
        for (ManagedProcess worker : workers) {
            worker.awaitLine("READY", TestTimes.millis(30_000));
        }
        workers.forEach(worker -> worker.send("GO"));
        // a call to a dead engine may last the connect timeout: a phase allows for two (an attempt and its withdrawal)
        Duration phase =
                TestTimes.scaled(Duration.ofSeconds(20).plus(connectTimeout().multipliedBy(2)));
        await(
                "grants on the primary in every process",
                phase,
                () -> workers.stream().allMatch(worker -> Status.of(worker).primaryGrants() >= GRANTS_PER_PHASE));

        long killedAt = System.nanoTime();
        killPrimary();
        await(
                "every process on the standby, granting there",
                phase,
                () -> workers.stream()
                        .map(Status::of)
                        .allMatch(status ->
                                status.current().equals("standby") && status.standbyGrants() >= GRANTS_PER_PHASE));
        long[] primaryGrantsBefore = workers.stream()
                .mapToLong(worker -> Status.of(worker).primaryGrants())
                .toArray();

        long restartingAt = System.nanoTime();
        restartPrimary();
        long restartedAt = System.nanoTime();
        await("every process back on the primary, granting there", phase, () -> {
            for (int i = 0; i < workers.size(); i++) {
                Status status = Status.of(workers.get(i));
                if (!status.current().equals("primary")
                        || status.primaryGrants() < primaryGrantsBefore[i] + GRANTS_PER_PHASE) {
                    return false;
                }
            }
            return true;
        });
        long backAt = System.nanoTime();

        long stoppingAt = System.nanoTime();
        workers.forEach(worker -> worker.send("STOP"));
        List<FailoverWorker.Result> results = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            workers.get(i).awaitLine("DONE", TestTimes.millis(40_000));
            results.add(FailoverWorker.Result.read(dir.resolve("result-" + i)));
        }

        long[] grants = results.stream()
                .flatMapToLong(result -> Arrays.stream(result.grantNanos()))
                .sorted()
                .toArray();
        Duration afterKill = longestWithoutGrant(grants, killedAt, restartingAt);
        Duration atFailBack = longestWithoutGrant(grants, restartingAt, stoppingAt);
        long lastOnPrimary = results.stream()
                .mapToLong(result -> result.lastGrantOn("primary", killedAt, restartingAt))
                .max()
                .orElse(killedAt);
        long firstOnStandby = results.stream()
                .mapToLong(result -> result.firstGrantOn("standby", killedAt, restartingAt))
                .min()
                .orElse(restartingAt);
        Duration lockDelayAfterKill = lockDelay(results, "primary");
        Duration lockDelayAtFailBack = lockDelay(results, "standby");
        long accepted =
                results.stream().mapToLong(FailoverWorker.Result::accepted).sum();
        long value = FencedCounterFile.value(counter);
        System.out.printf(
                "%s: %d processes x %d threads, after(%d ms).checkEvery(%d ms).failBackAfter(%d ms), default lease %d ms,"
                        + " connect timeout %d ms;"
                        + " after the kill, the last grant on the primary at %d ms and the first on the standby at %d ms;"
                        + " longest time without a grant: %d ms after the kill of the primary (lock-delay %d ms),"
                        + " %d ms around the fail-back (lock-delay %d ms); back on the primary %d ms after its restart;"
                        + " grants primary=%d standby=%d; counter %d, accepted increments %d; stale writes stopped %d;"
                        + " acquisitions refused as unavailable %d; releases that failed %d%n",
                getClass().getSimpleName(),
                PROCESSES,
                THREADS_PER_PROCESS,
                unhealthyFor().toMillis(),
                checkEvery().toMillis(),
                failBackAfter().toMillis(),
                defaultLease().toMillis(),
                connectTimeout().toMillis(),
                TimeUnit.NANOSECONDS.toMillis(lastOnPrimary - killedAt),
                TimeUnit.NANOSECONDS.toMillis(firstOnStandby - killedAt),
                afterKill.toMillis(),
                lockDelayAfterKill.toMillis(),
                atFailBack.toMillis(),
                lockDelayAtFailBack.toMillis(),
                TimeUnit.NANOSECONDS.toMillis(backAt - restartedAt),
                results.stream().mapToLong(result -> result.grantsOn("primary")).sum(),
                results.stream().mapToLong(result -> result.grantsOn("standby")).sum(),
                value,
                accepted,
                results.stream()
                        .mapToLong(FailoverWorker.Result::staleWritesStopped)
                        .sum(),
                results.stream().mapToLong(FailoverWorker.Result::unavailable).sum(),
                results.stream()
                        .mapToLong(FailoverWorker.Result::releaseFailures)
                        .sum());

        assertThat(value)
                .as("the counter against the increments both processes had accepted: none lost")
                .isEqualTo(accepted);
        for (FailoverWorker.Result result : results) {
            assertThat(result.grantsOn("primary"))
                    .as("grants on the primary in each process")
                    .isPositive();
            assertThat(result.grantsOn("standby"))
                    .as("grants on the standby in each process")
                    .isPositive();
        }
        assertThat(afterKill)
                .as("longest time without a grant from the kill of the primary on")
                .isLessThanOrEqualTo(gapBound(lockDelayAfterKill));
        assertThat(atFailBack)
                .as("longest time without a grant from the restart of the primary on, through the fail-back")
                .isLessThanOrEqualTo(gapBound(lockDelayAtFailBack));
        assertThat(Duration.ofNanos(backAt - restartedAt))
                .as("from the restart of the primary to both processes granting there")
                .isLessThanOrEqualTo(TestTimes.scaled(reconnectAllowance()
                        .plus(failBackAfter())
                        .plus(checkEvery())
                        .plus(Duration.ofSeconds(1))));
    }

    /** {@link Poll#until}, failing with what each worker last said and its standard error. */
    private void await(String what, Duration timeout, java.util.function.BooleanSupplier condition) {
        try {
            Poll.until(what, timeout, condition);
        } catch (AssertionError e) {
            StringBuilder message = new StringBuilder(e.getMessage());
            for (ManagedProcess worker : workers) {
                message.append("\n")
                        .append(worker.isAlive() ? Status.of(worker) : "(ended)")
                        .append(worker.diagnostics());
            }
            throw new AssertionError(message.toString(), e);
        }
    }

    /** unhealthyFor + checkEvery + lock-delay + 1 s, scaled. */
    private Duration gapBound(Duration lockDelay) {
        return TestTimes.scaled(
                unhealthyFor().plus(checkEvery()).plus(lockDelay).plus(Duration.ofSeconds(1)));
    }

    /** The lock-delay of a switch away from {@code engine}: the longest lease it granted, at least the default lease. */
    private Duration lockDelay(List<FailoverWorker.Result> results, String engine) {
        long longest = results.stream()
                .mapToLong(result -> result.longestLeaseMillis().getOrDefault(engine, 0L))
                .max()
                .orElse(0);
        return Duration.ofMillis(Math.max(longest, defaultLease().toMillis()));
    }

    /**
     * @param sortedGrants grant times, ascending
     * @return the longest interval in {@code [from, to]} that holds no grant, the window's ends counting as grants
     */
    static Duration longestWithoutGrant(long[] sortedGrants, long from, long to) {
        long longest = 0;
        long previous = from;
        for (long grant : sortedGrants) {
            if (grant - from > 0 && grant - to < 0) {
                longest = Math.max(longest, grant - previous);
                previous = grant;
            }
        }
        return Duration.ofNanos(Math.max(longest, to - previous));
    }
}
