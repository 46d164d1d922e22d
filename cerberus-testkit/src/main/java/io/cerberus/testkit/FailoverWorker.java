package io.cerberus.testkit;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.FailoverPolicy;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.servers.ManagedProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * A child JVM whose threads increment a {@link FencedCounterFile} under one lock of a client with
 * two engines, {@code primary} and {@code standby}, and automatic failover: the load a failover
 * test kills a server under. Each thread loops {@code tryAcquire(wait)}, reads the counter, holds
 * the lock about a millisecond (so two holders at once really lose an update), writes the value
 * plus one with the lease's engine and fencing token, and closes the lease. An
 * {@link EngineUnavailableException} is counted and the loop goes on.
 *
 * <p>Arguments: {@code NAMESPACE LOCK COUNTER_FILE RESULT_FILE THREADS LEASE_MS WAIT_MS
 * UNHEALTHY_MS CHECK_MS FAIL_BACK_MS CONNECT_TIMEOUT_MS}; the engine URIs come in {@link ManagedProcess#ENGINE_ENV}
 * (primary) and {@link ManagedProcess#SECOND_ENGINE_ENV} (standby). Prints {@code READY}, waits
 * for {@code GO} on standard input, then answers {@code STATUS} with
 * {@code STATUS current=ENGINE primary=GRANTS standby=GRANTS}, and on {@code STOP} stops its
 * threads, writes its {@link Result} to RESULT_FILE and prints {@code DONE}.
 */
public final class FailoverWorker {
    private final Cerberus cerberus;
    private final String lockName;
    private final FencedCounterFile counter;
    private final Duration wait;
    private final ConcurrentLinkedQueue<Grant> grants = new ConcurrentLinkedQueue<>();
    private final Map<String, LongAdder> grantsPerEngine = new ConcurrentHashMap<>();
    private final Map<String, Long> longestLease = new ConcurrentHashMap<>();
    private final LongAdder accepted = new LongAdder();
    private final LongAdder staleWritesStopped = new LongAdder();
    private final LongAdder unavailable = new LongAdder();
    private final LongAdder releaseFailures = new LongAdder();
    private volatile boolean stopped;

    private FailoverWorker(Cerberus cerberus, String lockName, FencedCounterFile counter, Duration wait) {
        this.cerberus = cerberus;
        this.lockName = lockName;
        this.counter = counter;
        this.wait = wait;
    }

    /** One grant: when (on {@link System#nanoTime()}, comparable across processes on Linux) and by which engine. */
    private record Grant(long nanos, String engine) {}

    /**
     * What one worker process did, as written to its result file.
     *
     * @param grantNanos when each grant came, on {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux,
     *     so comparable with the parent's clock), in the order of {@code grantEngines}
     * @param grantEngines which engine made each grant
     * @param accepted increments the counter accepted
     * @param staleWritesStopped writes the counter refused for an older fencing token
     * @param unavailable acquisitions that threw {@link EngineUnavailableException}
     * @param releaseFailures closes that threw (the engine was down, or the lease was lost)
     * @param longestLeaseMillis per engine, the longest lease it granted or the longer time it keeps a silent
     *     holder's lock ({@link Lease#silentHolderExpiry()}), in milliseconds: what the lock-delay covers
     */
    public record Result(
            long[] grantNanos,
            String[] grantEngines,
            long accepted,
            long staleWritesStopped,
            long unavailable,
            long releaseFailures,
            Map<String, Long> longestLeaseMillis) {
        /**
         * Reads a result file.
         *
         * @param file the file a worker wrote on {@code STOP}
         * @return the result
         * @throws IOException if the file cannot be read
         */
        public static Result read(Path file) throws IOException {
            List<Long> nanos = new ArrayList<>();
            List<String> engines = new ArrayList<>();
            Map<String, Long> totals = new HashMap<>();
            Map<String, Long> leases = new HashMap<>();
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String[] fields = line.split(" ");
                switch (fields[0]) {
                    case "GRANT" -> {
                        nanos.add(Long.parseLong(fields[1]));
                        engines.add(fields[2]);
                    }
                    case "LEASE" -> leases.put(fields[1], Long.parseLong(fields[2]));
                    default -> totals.put(fields[0], Long.parseLong(fields[1]));
                }
            }
            return new Result(
                    nanos.stream().mapToLong(Long::longValue).toArray(),
                    engines.toArray(String[]::new),
                    totals.getOrDefault("ACCEPTED", 0L),
                    totals.getOrDefault("STALE", 0L),
                    totals.getOrDefault("UNAVAILABLE", 0L),
                    totals.getOrDefault("RELEASE_FAILURES", 0L),
                    Map.copyOf(leases));
        }

        /** @return the time of the first grant by {@code engine} in {@code [from, to)}, or {@code to} if none */
        public long firstGrantOn(String engine, long from, long to) {
            long first = to;
            for (int i = 0; i < grantNanos.length; i++) {
                if (grantEngines[i].equals(engine) && grantNanos[i] - from >= 0 && grantNanos[i] - first < 0) {
                    first = grantNanos[i];
                }
            }
            return first;
        }

        /** @return the time of the last grant by {@code engine} in {@code [from, to)}, or {@code from} if none */
        public long lastGrantOn(String engine, long from, long to) {
            long last = from;
            for (int i = 0; i < grantNanos.length; i++) {
                if (grantEngines[i].equals(engine) && grantNanos[i] - last > 0 && grantNanos[i] - to < 0) {
                    last = grantNanos[i];
                }
            }
            return last;
        }

        /**
         * @param engine an engine name
         * @return how many grants that engine made
         */
        public long grantsOn(String engine) {
            long count = 0;
            for (String granted : grantEngines) {
                if (granted.equals(engine)) {
                    count++;
                }
            }
            return count;
        }
    }

    /**
     * @param args NAMESPACE LOCK COUNTER_FILE RESULT_FILE THREADS LEASE_MS WAIT_MS UNHEALTHY_MS CHECK_MS FAIL_BACK_MS
     *     CONNECT_TIMEOUT_MS
     * @throws IOException if standard input or the result file fails
     * @throws InterruptedException if interrupted while stopping its threads
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        int threads = Integer.parseInt(args[4]);
        FailoverPolicy policy = FailoverPolicy.after(millis(args[7]))
                .checkEvery(millis(args[8]))
                .failBackAfter(millis(args[9]));
        try (Cerberus cerberus = Cerberus.builder()
                        .engine("primary", ManagedProcess.engineUri())
                        .engine("standby", ManagedProcess.secondEngineUri())
                        .namespace(args[0])
                        .defaultLease(millis(args[5]))
                        .connectTimeout(millis(args[10]))
                        .failover(policy)
                        .build();
                FencedCounterFile counter = FencedCounterFile.open(Path.of(args[2]))) {
            FailoverWorker worker = new FailoverWorker(cerberus, args[1], counter, millis(args[6]));
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            System.out.println("READY");
            System.out.flush();
            if (!"GO".equals(commands.readLine())) {
                return;
            }
            List<Thread> running = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Thread thread = new Thread(worker::loop, "failover-worker-" + i);
                running.add(thread);
                thread.start();
            }
            String command;
            while ((command = commands.readLine()) != null && !command.equals("STOP")) {
                if (command.equals("STATUS")) {
                    System.out.println("STATUS current=" + cerberus.currentEngine() + " primary="
                            + worker.grantsOn("primary") + " standby=" + worker.grantsOn("standby"));
                    System.out.flush();
                }
            }
            worker.stopped = true;
            for (Thread thread : running) {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            }
            worker.writeResult(Path.of(args[3]));
            System.out.println("DONE");
            System.out.flush();
        }
    }

    private static Duration millis(String value) {
        return Duration.ofMillis(Long.parseLong(value));
    }

    private long grantsOn(String engine) {
        LongAdder count = grantsPerEngine.get(engine);
        return count == null ? 0 : count.sum();
    }

    private void loop() {
        while (!stopped) {
            Optional<Lease> granted;
            try {
                granted = cerberus.lock(lockName).tryAcquire(wait);
            } catch (EngineUnavailableException e) {
                unavailable.increment();
                continue;
            } catch (InterruptedException e) {
                return;
            }
            if (granted.isEmpty()) {
                continue;
            }
            Lease lease = granted.get();
            grants.add(new Grant(System.nanoTime(), lease.engineName()));
            grantsPerEngine
                    .computeIfAbsent(lease.engineName(), name -> new LongAdder())
                    .increment();
            // what the lock-delay covers: the lease, or the longer time the engine keeps a silent holder's lock
            long kept = Math.max(
                    lease.leaseTime().toMillis(),
                    lease.silentHolderExpiry().map(Duration::toMillis).orElse(0L));
            longestLease.merge(lease.engineName(), kept, Math::max);
            try {
                long value = counter.read();
                // the work under the lock: long enough that a second holder at the same time reads the same value
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                if (counter.write(value + 1, lease.engineName(), lease.fencingToken())) {
                    accepted.increment();
                } else {
                    staleWritesStopped.increment();
                }
            } finally {
                try {
                    lease.close();
                } catch (LockLostException | EngineUnavailableException e) {
                    // the engine died under the hold or could not be told; the write was already fenced
                    releaseFailures.increment();
                }
            }
        }
    }

    private void writeResult(Path file) throws IOException {
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            for (Grant grant : grants) {
                out.println("GRANT " + grant.nanos() + " " + grant.engine());
            }
            longestLease.forEach((engine, lease) -> out.println("LEASE " + engine + " " + lease));
            out.println("ACCEPTED " + accepted.sum());
            out.println("STALE " + staleWritesStopped.sum());
            out.println("UNAVAILABLE " + unavailable.sum());
            out.println("RELEASE_FAILURES " + releaseFailures.sum());
        }
    }
}
