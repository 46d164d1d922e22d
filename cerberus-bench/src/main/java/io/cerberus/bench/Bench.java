package io.cerberus.bench;

import io.cerberus.servers.ServerException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs the benchmark matrix, engine by engine, against one server per engine (started here; Redis
 * may be given with {@code --redis host:port}): every peer of the engine, workload and thread count
 * in the same run, the peers of a cell taking turns ({@link #measureInTurns}), and prints a markdown report with ratios to each engine's
 * main peer (Redisson, Curator, jetcd Lock, Spring's JdbcLockRegistry).
 *
 * <pre>
 * java -jar cerberus-bench.jar [--engines redis,zk,etcd,postgres,mariadb] [--threads 1,4,16] [--seconds 3] [--warmup 1]
 *      [--workloads uncontended,contended,idempotent,replay,many-names,contended-2p,held-locks,async,virtual-threads,
 *                   semaphore,semaphore-contended,wake-up]
 *      [--peers cerberus,redisson,spring,...] [--waiters 1000] [--names 100000] [--held 10000] [--lease 2]
 *      [--redis host:port] [--out report.md]
 * </pre>
 *
 * With {@code --out}, a chart per engine and workload is written next to the report, as SVG.
 */
public final class Bench {
    private static final int MAX_SAMPLES = 1 << 20;
    /**
     * Workloads of locks: a cycle is lock, unlock; of the thread's own name, of one name for all, or
     * ({@code many-names}) of a random one of {@code --names} names.
     */
    static final List<String> LOCK_WORKLOADS = List.of("uncontended", "contended", "many-names");
    /**
     * Workloads of the idempotency guard: a cycle is one guarded call, of a new key each time
     * ({@code idempotent}: claim and complete) or of the thread's one key ({@code replay}: a duplicate).
     */
    static final List<String> GUARD_WORKLOADS = List.of("idempotent", "replay");
    /**
     * {@code contended} with the threads split over this JVM and a child JVM ({@link TwoProcessContention}),
     * of the distributed lock peers only, at T of 2 and more.
     */
    static final String TWO_PROCESSES = "contended-2p";
    /** The workload of {@link AsyncWaiters}: {@code --waiters} async waiters, no thread each, over a few names. */
    static final String ASYNC = "async";
    /**
     * {@code --waiters} virtual threads over the names of {@link AsyncWaiters} with the blocking API, each
     * cycle checked by an {@link Exclusion}; run only on Java 21 or newer.
     */
    static final String VIRTUAL_THREADS = "virtual-threads";
    /** The workloads whose cells are by {@code --waiters} rather than {@code --threads}. */
    static final List<String> WAITER_WORKLOADS = List.of(ASYNC, VIRTUAL_THREADS);
    /** The peers of {@link #WAITER_WORKLOADS} by {@code --peers} name: those with an async lock. */
    static final List<String> WAITER_PEERS = List.of("cerberus", "redisson");
    /**
     * Workloads of semaphores: a cycle is taking one permit of one semaphore that every thread shares, and giving it
     * back; the semaphore has T permits ({@code semaphore}: nobody waits; or {@link #SEMAPHORE_PERMITS}) or
     * {@link #CONTENDED_PERMITS} ({@code semaphore-contended}). Each hold is checked to be among at most that many.
     */
    static final List<String> SEMAPHORE_WORKLOADS = List.of("semaphore", "semaphore-contended");
    /** The permits of {@code semaphore-contended}'s semaphore. */
    static final int CONTENDED_PERMITS = 2;
    /** The system property that gives {@code semaphore}'s semaphore more permits than threads ({@link #SEMAPHORE_PERMITS}). */
    static final String SEMAPHORE_PERMITS_PROPERTY = "cerberus.bench.semaphorePermits";
    /**
     * The permits of {@code semaphore}'s semaphore at every T, from {@value #SEMAPHORE_PERMITS_PROPERTY}; 0 (unset)
     * gives it T: how much of a scan's cost is meeting held slots.
     */
    static final int SEMAPHORE_PERMITS = Integer.getInteger(SEMAPHORE_PERMITS_PROPERTY, 0);
    /** The workload of {@link HeldLocks}: not a matrix of cells but one hold per peer. */
    static final String HELD_LOCKS = "held-locks";
    /**
     * The workload of {@link WakeUp}: from a release to the grant of a waiter on another client, one waiter, per
     * distributed lock peer; one cell per engine, whatever {@code --threads} says.
     */
    static final String WAKE_UP = "wake-up";

    static final List<String> DEFAULT_WORKLOADS = List.of("uncontended", "contended", "idempotent", "replay");

    private Bench() {}

    /**
     * One measured cell of the matrix. The last three are of {@code many-names} only (NaN otherwise, and
     * where the server cannot tell): the distinct names the cell locked, and how many objects and bytes
     * the server held more after the cell (its peer closed) than before it. The last is of {@code contended-2p} only
     * (NaN otherwise): the share of the cycles that the child JVM ran. {@code rounds} are the cycles/s of the
     * peer's slice in each round of a cell taken in turns ({@link #measureInTurns}), in round order; empty for a
     * cell measured in one piece. A {@code wake-up} row ({@link WakeUp}) counts its rounds as cycles, and its latencies
     * are wake-ups, from the holder's release to the waiter's grant.
     */
    record Result(
            String engine,
            String workload,
            String peer,
            int threads,
            long cycles,
            double seconds,
            long p50,
            long p99,
            long p999,
            long max,
            double cpuMicrosPerCycle,
            double requestsPerCycle,
            double namesTouched,
            double objectsLeft,
            double bytesLeft,
            double childShare,
            double[] rounds) {
        double perSecond() {
            return cycles / seconds;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        List<Integer> threads = Arrays.stream(
                        options.getOrDefault("threads", "1,4,16").split(","))
                .map(Integer::valueOf)
                .toList();
        Duration seconds = Duration.ofMillis((long) (Double.parseDouble(options.getOrDefault("seconds", "3")) * 1000));
        Duration warmup = Duration.ofMillis((long) (Double.parseDouble(options.getOrDefault("warmup", "1")) * 1000));
        List<String> workloads = options.containsKey("workloads")
                ? List.of(options.get("workloads").split(","))
                : DEFAULT_WORKLOADS;
        List<Integer> waiters = Arrays.stream(
                        options.getOrDefault("waiters", "1000").split(","))
                .map(Integer::valueOf)
                .toList();
        int names = Integer.parseInt(options.getOrDefault("names", "100000"));
        int held = Integer.parseInt(options.getOrDefault("held", "10000"));
        Duration lease = Duration.ofMillis((long) (Double.parseDouble(options.getOrDefault("lease", "2")) * 1000));
        List<String> engines = List.of(options.getOrDefault("engines", String.join(",", EngineGroups.PEERS.keySet()))
                .split(","));
        List<String> peerNames = options.containsKey("peers")
                ? List.of(options.get("peers").split(","))
                : engines.stream()
                        .filter(EngineGroups.PEERS::containsKey)
                        .flatMap(engine -> EngineGroups.PEERS.get(engine).stream())
                        .distinct()
                        .toList();
        for (int t : threads) {
            if (t < 1 || t > 64) {
                throw new IllegalArgumentException("--threads must be 1 to 64 each, was " + t);
            }
        }
        for (int w : waiters) {
            if (w < 1 || w > 100_000) {
                throw new IllegalArgumentException("--waiters must be 1 to 100000 each, was " + w);
            }
        }
        if (names < 1 || held < 1) {
            throw new IllegalArgumentException("--names and --held must be at least 1, were " + names + " and " + held);
        }
        if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException(
                    "--lease must be at least 1 (seconds; etcd leases are whole seconds), was " + lease.toMillis()
                            + " ms");
        }
        checkWorkloads(workloads);
        int most = threads.stream().mapToInt(Integer::intValue).max().orElse(1);
        if (SEMAPHORE_PERMITS != 0 && (SEMAPHORE_PERMITS < most || SEMAPHORE_PERMITS > 1000)) {
            throw new IllegalArgumentException("-D" + SEMAPHORE_PERMITS_PROPERTY + " must be from the most threads ("
                    + most + ": nobody waits) to 1000, was " + SEMAPHORE_PERMITS);
        }
        EngineGroups.check(engines, peerNames);
        Path out = options.containsKey("out") ? Path.of(options.get("out")).toAbsolutePath() : null;
        if (out != null) {
            // made before the run, so that a run of many minutes does not end in a report it cannot write
            Files.createDirectories(out.getParent());
        }
        List<Bench.Result> results = new ArrayList<>();
        List<HeldLocks.Result> holds = new ArrayList<>();
        List<EngineGroup> done = new ArrayList<>();
        try (BenchProgress progress = BenchProgress.start(
                options.getOrDefault("progress", "auto"),
                Duration.ofMillis((long) (Double.parseDouble(options.getOrDefault("progress-every", "30")) * 1000)),
                engines.size() * cells(workloads, threads, waiters))) {
            for (String engine : engines) {
                // one server at a time, so that an engine's cells never share the machine with another server's work
                progress.cell(engine + ": starting the server and the peers");
                try (EngineGroup group = start(engine, options, peerNames, threads)) {
                    results.addAll(run(
                            group,
                            threads,
                            seconds,
                            warmup,
                            workloads.stream()
                                    .filter(w -> !w.equals(HELD_LOCKS))
                                    .toList(),
                            names,
                            waiters,
                            progress));
                    if (workloads.contains(HELD_LOCKS)) {
                        progress.cell(engine + " " + HELD_LOCKS);
                        holds.addAll(HeldLocks.run(group, held, lease));
                        progress.done(1);
                    }
                    done.add(group);
                }
            }
        }
        String chartPrefix = out == null ? null : out.getFileName().toString().replaceFirst("\\.md$", "");
        String report = Report.markdown(results, holds, done, threads, seconds, chartPrefix);
        System.out.print(report);
        if (out != null) {
            Files.writeString(out, report);
            for (Map.Entry<String, String> chart :
                    Report.charts(results, holds, done, threads).entrySet()) {
                Files.writeString(out.resolveSibling(chartPrefix + "-" + chart.getKey() + ".svg"), chart.getValue());
            }
        }
        if (holds.stream().anyMatch(HeldLocks.Result::failed)) {
            System.err.println("a peer lost held locks or failed to release them: see the held-locks table");
            System.exit(1);
        }
    }

    private static EngineGroup start(
            String engine, Map<String, String> options, List<String> peerNames, List<Integer> threads)
            throws Exception {
        try {
            return switch (engine) {
                case "redis" ->
                    EngineGroups.redis(
                            options.containsKey("redis")
                                    ? RedisProcess.external(options.get("redis"))
                                    : RedisProcess.start(),
                            peerNames);
                case "zk" -> EngineGroups.zooKeeper(peerNames);
                case "etcd" -> EngineGroups.etcd(peerNames);
                case "mariadb" ->
                    EngineGroups.mariaDb(
                            peerNames,
                            Math.max(
                                    4,
                                    threads.stream()
                                            .mapToInt(Integer::intValue)
                                            .max()
                                            .orElse(4)));
                default ->
                    EngineGroups.postgres(
                            peerNames,
                            Math.max(
                                    4,
                                    threads.stream()
                                            .mapToInt(Integer::intValue)
                                            .max()
                                            .orElse(4)));
            };
        } catch (ServerException e) {
            // a server that is missing or does not start: its message says what to install or what it printed
            throw new ServerException(
                    e.getMessage() + " (or leave the engine out: --engines without " + engine + ")", e);
        }
    }

    /**
     * @return the cells of one engine's run, for the progress line: each matrix workload at each thread count, and
     *     {@code contended-2p}, {@code held-locks} and {@code wake-up} one each, the waiter workloads at each waiter count
     */
    private static int cells(List<String> workloads, List<Integer> threads, List<Integer> waiters) {
        int cells = 0;
        for (String workload : workloads) {
            cells += workload.equals(TWO_PROCESSES) || workload.equals(HELD_LOCKS) || workload.equals(WAKE_UP)
                    ? 1
                    : WAITER_WORKLOADS.contains(workload) ? waiters.size() : threads.size();
        }
        return cells;
    }

    private static void checkWorkloads(List<String> workloads) {
        for (String workload : workloads) {
            if (!LOCK_WORKLOADS.contains(workload)
                    && !GUARD_WORKLOADS.contains(workload)
                    && !SEMAPHORE_WORKLOADS.contains(workload)
                    && !WAITER_WORKLOADS.contains(workload)
                    && !workload.equals(TWO_PROCESSES)
                    && !workload.equals(HELD_LOCKS)
                    && !workload.equals(WAKE_UP)) {
                throw new IllegalArgumentException("unknown workload '" + workload
                        + "'; workloads: uncontended, contended, idempotent, replay, many-names, contended-2p,"
                        + " held-locks, async, virtual-threads, semaphore, semaphore-contended, wake-up");
            }
        }
    }

    /**
     * Runs the matrix of one engine: its workloads (the idempotency ones only where the engine has
     * guard peers) by thread count by peer; {@code many-names} on {@code names} names; the waiter workloads
     * at 1,000 waiters; {@code contended-2p} after them, with a child JVM per cell; {@code wake-up} last, a row per
     * distributed lock peer.
     */
    static List<Result> run(
            EngineGroup group,
            List<Integer> threads,
            Duration seconds,
            Duration warmup,
            List<String> workloads,
            int names)
            throws Exception {
        return run(group, threads, seconds, warmup, workloads, names, List.of(1000), BenchProgress.NONE);
    }

    /**
     * {@link #run(EngineGroup, List, Duration, Duration, List, int)} with the waiter workloads' cells at these waiter
     * counts, telling the progress line which cell runs and which are done.
     */
    static List<Result> run(
            EngineGroup group,
            List<Integer> threads,
            Duration seconds,
            Duration warmup,
            List<String> workloads,
            int names,
            List<Integer> waiters,
            BenchProgress progress)
            throws Exception {
        checkWorkloads(workloads);
        if (workloads.contains(HELD_LOCKS)) {
            throw new IllegalArgumentException("held-locks is not a matrix of cells: run it with HeldLocks.run");
        }
        if (workloads.contains(VIRTUAL_THREADS) && !VirtualThreads.available()) {
            System.err.println(VIRTUAL_THREADS + " skipped: virtual threads need Java 21 or newer, this is Java "
                    + Runtime.version().feature());
        }
        List<String> runnable = workloads.stream()
                .filter(workload -> !workload.equals(TWO_PROCESSES) && !workload.equals(WAKE_UP))
                .filter(workload -> !peersOf(group, workload, 1).isEmpty())
                .filter(workload -> !workload.equals(VIRTUAL_THREADS) || VirtualThreads.available())
                .toList();
        List<Result> results = new ArrayList<>();
        progress.skip(workloads.stream()
                .filter(workload ->
                        !workload.equals(TWO_PROCESSES) && !workload.equals(WAKE_UP) && !runnable.contains(workload))
                .mapToInt(workload -> WAITER_WORKLOADS.contains(workload) ? waiters.size() : threads.size())
                .sum());
        progress.cell(group.engine() + ": warming every peer up");
        // warm every peer up first, so that the first cells of the matrix do not pay for the JIT compiler
        int warmCell = 0;
        for (String workload : runnable) {
            for (Supplier<Peer> supplier : peersOf(group, workload, 4).values()) {
                try (Peer peer = supplier.get()) {
                    measure(peer, workload, 4, warmup.multipliedBy(2), group.engine() + "-warm" + warmCell++, names);
                }
            }
        }
        int cell = 0;
        for (String workload : runnable) {
            for (int t : WAITER_WORKLOADS.contains(workload) ? waiters : threads) {
                List<Map.Entry<String, Supplier<Peer>>> peers =
                        List.copyOf(peersOf(group, workload, t).entrySet());
                // many-names asks the server what each peer left behind, after the peer closed: one peer open at a time
                boolean alone = workload.equals("many-names");
                progress.cell(group.engine() + " " + workload + " T=" + t);
                List<Result> row = alone
                        ? measureOneByOne(group, workload, t, seconds, warmup, names, peers, cell)
                        : measureInTurns(group, workload, t, seconds, warmup, peers, cell);
                cell += peers.size();
                progress.done(1);
                for (Result result : row) {
                    results.add(result);
                    System.err.printf(
                            Locale.ROOT,
                            "%-8s %-12s %-34s T=%-3d %,12.0f cycles/s  p99 %,10.1f µs%s%n",
                            group.engine(),
                            workload,
                            result.peer(),
                            t,
                            result.perSecond(),
                            result.p99() / 1000.0,
                            Double.isNaN(result.objectsLeft())
                                    ? ""
                                    : String.format(
                                            Locale.ROOT,
                                            "  %,.0f names, %,.0f %s left",
                                            result.namesTouched(),
                                            result.objectsLeft(),
                                            group.residue().objects()));
                }
            }
        }
        if (workloads.contains(TWO_PROCESSES)) {
            progress.cell(group.engine() + " " + TWO_PROCESSES);
            results.addAll(TwoProcessContention.run(group, threads, seconds, warmup));
            progress.done(1);
        }
        if (workloads.contains(WAKE_UP)) {
            progress.cell(group.engine() + " " + WAKE_UP);
            results.addAll(WakeUp.run(group, seconds, warmup));
            progress.done(1);
        }
        return results;
    }

    /** The {@link Result#rounds} of a cell measured in one piece. */
    static final double[] NO_ROUNDS = new double[0];

    /** The slices a cell's measured time is cut into, for {@link #measureInTurns}: an even number. */
    static final int SLICES = 4;

    /**
     * Measures a cell's peers in turns, all of them open at once: each is warmed up (twice over, so that what the others
     * ran meanwhile is compiled too), then the measured time is cut into {@link #SLICES} slices per peer, taken in the
     * order A B, B A, A B, B A. A drift of the machine during the cell (another process, the server's caches, the JIT)
     * then weighs on every peer alike, where one peer after the other put it on whichever came later.
     */
    private static List<Result> measureInTurns(
            EngineGroup group,
            String workload,
            int t,
            Duration seconds,
            Duration warmup,
            List<Map.Entry<String, Supplier<Peer>>> peers,
            int firstCell)
            throws Exception {
        List<Peer> open = new ArrayList<>();
        try {
            for (Map.Entry<String, Supplier<Peer>> entry : peers) {
                open.add(entry.getValue().get());
            }
            String[] cells = new String[open.size()];
            for (int i = 0; i < open.size(); i++) {
                cells[i] = group.engine() + "-" + (firstCell + i + 1);
            }
            for (int pass = 1; pass <= 2; pass++) {
                for (int i = 0; i < open.size(); i++) {
                    warmUntilCompiled(open.get(i), workload, t, warmup, cells[i] + "w" + pass, 0);
                }
            }
            Samples[] measured = new Samples[open.size()];
            double[][] rounds = new double[open.size()][SLICES];
            long[] requests = new long[open.size()];
            Duration slice = seconds.dividedBy(SLICES);
            for (int round = 0; round < SLICES; round++) {
                for (int k = 0; k < open.size(); k++) {
                    int i = round % 2 == 0 ? k : open.size() - 1 - k;
                    boolean counted =
                            group.requests() != null && !peers.get(i).getKey().equals("jvm");
                    long before = counted ? group.requests().getAsLong() : 0;
                    // a slice's names are its own: the idempotent workload's keys must be new in every slice
                    Samples samples = sample(open.get(i), workload, t, slice, cells[i] + "m" + round, 0);
                    requests[i] += counted ? group.requests().getAsLong() - before : 0;
                    rounds[i][round] = samples.cycles() / samples.seconds();
                    measured[i] = measured[i] == null ? samples : measured[i].then(samples);
                }
            }
            List<Result> row = new ArrayList<>();
            for (int i = 0; i < open.size(); i++) {
                boolean counted =
                        group.requests() != null && !peers.get(i).getKey().equals("jvm");
                Result result = result(open.get(i).name(), workload, t, measured[i]);
                double perCycle = counted ? (double) requests[i] / Math.max(1, result.cycles()) : Double.NaN;
                row.add(new Result(
                        group.engine(),
                        workload,
                        result.peer(),
                        t,
                        result.cycles(),
                        result.seconds(),
                        result.p50(),
                        result.p99(),
                        result.p999(),
                        result.max(),
                        result.cpuMicrosPerCycle(),
                        perCycle,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        rounds[i]));
            }
            return row;
        } finally {
            for (Peer peer : open) {
                peer.close();
            }
        }
    }

    /**
     * Measures a cell's peers one after the other, each alone: opened, warmed up, measured for the whole time,
     * closed. {@code many-names} does, to ask the server what each peer left behind once it closed.
     */
    private static List<Result> measureOneByOne(
            EngineGroup group,
            String workload,
            int t,
            Duration seconds,
            Duration warmup,
            int names,
            List<Map.Entry<String, Supplier<Peer>>> peers,
            int firstCell)
            throws Exception {
        List<Result> row = new ArrayList<>();
        int cell = firstCell;
        for (Map.Entry<String, Supplier<Peer>> entry : peers) {
            cell++;
            boolean residue = group.residue() != null && !entry.getKey().equals("jvm");
            long objectsBefore = 0;
            long bytesBefore = 0;
            Result result;
            double requests;
            try (Peer peer = entry.getValue().get()) {
                String name = group.engine() + "-" + cell;
                warmUntilCompiled(peer, workload, t, warmup, name + "w", names);
                if (residue) {
                    objectsBefore = group.residue().settledCount();
                    bytesBefore = group.residue().bytes().getAsLong();
                }
                boolean counted = group.requests() != null && !entry.getKey().equals("jvm");
                long before = counted ? group.requests().getAsLong() : 0;
                result = measure(peer, workload, t, seconds, name + "m", names);
                requests = counted
                        ? (double) (group.requests().getAsLong() - before) / Math.max(1, result.cycles())
                        : Double.NaN;
            }
            double objectsLeft = residue ? group.residue().settledCount() - objectsBefore : Double.NaN;
            double bytesLeft = residue ? group.residue().bytes().getAsLong() - bytesBefore : Double.NaN;
            row.add(new Result(
                    group.engine(),
                    workload,
                    result.peer(),
                    t,
                    result.cycles(),
                    result.seconds(),
                    result.p50(),
                    result.p99(),
                    result.p999(),
                    result.max(),
                    result.cpuMicrosPerCycle(),
                    requests,
                    result.namesTouched(),
                    objectsLeft,
                    bytesLeft,
                    Double.NaN,
                    NO_ROUNDS));
        }
        return row;
    }

    /** @return the peers of a workload's cells at {@code threads} threads (or waiters), by option name */
    private static Map<String, Supplier<Peer>> peersOf(EngineGroup group, String workload, int threads) {
        if (SEMAPHORE_WORKLOADS.contains(workload)) {
            int permits = permits(workload, threads);
            Map<String, Supplier<Peer>> peers = new LinkedHashMap<>();
            group.semaphores().peers().forEach((name, peer) -> peers.put(name, () -> peer.apply(permits)));
            return peers;
        }
        if (WAITER_WORKLOADS.contains(workload)) {
            Map<String, Supplier<Peer>> peers = new LinkedHashMap<>(group.lockPeers());
            peers.keySet().retainAll(WAITER_PEERS);
            return peers;
        }
        return GUARD_WORKLOADS.contains(workload) ? group.guardPeers() : group.lockPeers();
    }

    /**
     * @return the permits of a semaphore workload's semaphore at T threads: T (or {@link #SEMAPHORE_PERMITS}), or
     *     {@link #CONTENDED_PERMITS}
     */
    static int permits(String workload, int threads) {
        if (workload.equals("semaphore-contended")) {
            return CONTENDED_PERMITS;
        }
        return SEMAPHORE_PERMITS > 0 ? SEMAPHORE_PERMITS : threads;
    }

    /**
     * What the threads of one {@link #sample} did, over both JVMs once {@link #and merged}.
     *
     * @param cycles the cycles completed
     * @param seconds the measured time
     * @param cpuNanos the process's CPU time over it
     * @param sorted the latencies, ascending (at most {@value #MAX_SAMPLES} per thread)
     * @param namesTouched the distinct names of {@code many-names} (NaN otherwise)
     */
    record Samples(long cycles, double seconds, long cpuNanos, long[] sorted, double namesTouched) {
        long percentile(double p) {
            return Bench.percentile(sorted, p);
        }

        long max() {
            return sorted.length == 0 ? 0 : sorted[sorted.length - 1];
        }

        /**
         * @return these and {@code other}, measured at the same time in two processes: cycles, CPU time
         *     and latencies of both, over the longer of the two times
         */
        Samples and(Samples other) {
            long[] both = Arrays.copyOf(sorted, sorted.length + other.sorted.length);
            System.arraycopy(other.sorted, 0, both, sorted.length, other.sorted.length);
            Arrays.sort(both);
            return new Samples(
                    cycles + other.cycles,
                    Math.max(seconds, other.seconds),
                    cpuNanos + other.cpuNanos,
                    both,
                    Double.NaN);
        }

        /** @return these and {@code next}, measured one after the other in this process: over the sum of the two times */
        Samples then(Samples next) {
            long[] both = Arrays.copyOf(sorted, sorted.length + next.sorted.length);
            System.arraycopy(next.sorted, 0, both, sorted.length, next.sorted.length);
            Arrays.sort(both);
            return new Samples(
                    cycles + next.cycles, seconds + next.seconds, cpuNanos + next.cpuNanos, both, Double.NaN);
        }
    }

    /** The system property that bounds the warm-up rounds per cell ({@link #MAX_WARM_ROUNDS}). */
    static final String MAX_WARM_ROUNDS_PROPERTY = "cerberus.bench.maxWarmRounds";
    /**
     * At most this many warm-up rounds per cell: 8, or {@value #MAX_WARM_ROUNDS_PROPERTY}. The
     * build's smoke test, whose figures are not judged, takes 1.
     */
    static final int MAX_WARM_ROUNDS = Math.max(1, Integer.getInteger(MAX_WARM_ROUNDS_PROPERTY, 8));
    /** A warm-up round is quiet when the JIT compiler spent less than this share of it compiling. */
    static final double QUIET_COMPILING = 0.02;

    /**
     * Warms a cell up until the JIT compiler is quiet: rounds of {@code warmup} while the compiler
     * spent more than {@link #QUIET_COMPILING} of the round compiling, at most {@link #MAX_WARM_ROUNDS}.
     * The measured part is then the steady state, and its CPU time is the peer's, not the compiler's
     * (a compiler thread busy during the measured part was seen to double a peer's CPU per cycle).
     */
    static void warmUntilCompiled(Peer peer, String workload, int threads, Duration warmup, String cell, int names)
            throws InterruptedException {
        java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
        for (int round = 1; round <= MAX_WARM_ROUNDS; round++) {
            long before = timed ? jit.getTotalCompilationTime() : 0;
            measure(peer, workload, threads, warmup, cell, names);
            long compiling = timed ? jit.getTotalCompilationTime() - before : 0;
            if (compiling < QUIET_COMPILING * warmup.toMillis()) {
                return;
            }
            if (round == MAX_WARM_ROUNDS) {
                System.err.printf(
                        Locale.ROOT,
                        "%s %s T=%d: the JIT compiler still spent %d ms of the last %d ms warm-up compiling%n",
                        peer.name(),
                        workload,
                        threads,
                        compiling,
                        warmup.toMillis());
            }
        }
    }

    private static Result measure(Peer peer, String workload, int threads, Duration duration, String cell, int names)
            throws InterruptedException {
        return result(peer.name(), workload, threads, sample(peer, workload, threads, duration, cell, names));
    }

    private static Result result(String peer, String workload, int threads, Samples s) {
        return new Result(
                "",
                workload,
                peer,
                threads,
                s.cycles(),
                s.seconds(),
                s.percentile(0.50),
                s.percentile(0.99),
                s.percentile(0.999),
                s.max(),
                s.cycles() == 0 ? 0 : s.cpuNanos() / 1000.0 / s.cycles(),
                0,
                s.namesTouched(),
                Double.NaN,
                Double.NaN,
                Double.NaN,
                NO_ROUNDS);
    }

    /**
     * Runs T threads for the duration; each cycle is lock → unlock; latency is the time to acquire.
     * {@code contended} locks one name ({@code bench-<cell>}) from every thread; {@code many-names} locks
     * a random one of {@code names} names each cycle and counts the distinct ones; {@code virtual-threads} runs
     * virtual threads over the names of {@link AsyncWaiters}, checking each hold with an {@link Exclusion};
     * the semaphore workloads take a permit of one semaphore ({@code bench-<cell>}) from every thread, each hold
     * checked to be among at most {@link #permits} by an {@link Exclusion}; {@code async} is
     * {@link AsyncWaiters#sample}, with {@code threads} waiters.
     *
     * @throws IllegalStateException if the peer failed in a thread (the first failure's stack trace is printed)
     *     or broke mutual exclusion
     */
    static Samples sample(Peer peer, String workload, int threads, Duration duration, String cell, int names)
            throws InterruptedException {
        if (workload.equals(ASYNC)) {
            return AsyncWaiters.sample(peer, threads, duration, cell);
        }
        boolean virtual = workload.equals(VIRTUAL_THREADS);
        boolean semaphore = SEMAPHORE_WORKLOADS.contains(workload);
        ThreadFactory virtualThreads = virtual ? VirtualThreads.factory() : null;
        Exclusion exclusion =
                semaphore ? new Exclusion(1, permits(workload, threads)) : new Exclusion(AsyncWaiters.NAMES);
        long[][] samples = new long[threads][];
        long[] cycles = new long[threads];
        boolean manyNames = workload.equals("many-names");
        BitSet[] touched = new BitSet[threads];
        int[] counts = new int[threads];
        AtomicInteger failures = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        long[] deadline = new long[1];
        for (int i = 0; i < threads; i++) {
            int index = i;
            // thousands of virtual threads start small and grow as they need
            samples[i] = new long[Math.min(MAX_SAMPLES, virtual ? 1 << 8 : 1 << 16)];
            int nameIndex = semaphore ? 0 : i % AsyncWaiters.NAMES;
            String name = workload.equals("contended") || semaphore
                    ? "bench-" + cell
                    : virtual ? "bench-" + cell + "-" + nameIndex : "bench-" + cell + "-" + i;
            boolean freshNames = workload.equals("idempotent");
            String shared = "bench-" + cell + "-n";
            touched[i] = new BitSet(manyNames ? names : 0);
            Runnable work = () -> {
                try {
                    start.await();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (System.nanoTime() - deadline[0] < 0) {
                        String lockName = name;
                        if (manyNames) {
                            int n = random.nextInt(names);
                            touched[index].set(n);
                            lockName = shared + n;
                        } else if (freshNames) {
                            lockName = name + "-" + cycles[index];
                        }
                        long t0 = System.nanoTime();
                        Peer.Held held = peer.lock(lockName);
                        long waited = System.nanoTime() - t0;
                        if (virtual || semaphore) {
                            exclusion.hold(nameIndex, Peer.AsyncHeld.NO_TOKEN);
                        }
                        held.unlock();
                        cycles[index]++;
                        if (counts[index] == samples[index].length && samples[index].length < MAX_SAMPLES) {
                            samples[index] = Arrays.copyOf(samples[index], samples[index].length * 2);
                        }
                        if (counts[index] < samples[index].length) {
                            samples[index][counts[index]++] = waited;
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    if (failures.getAndIncrement() == 0) {
                        e.printStackTrace();
                    }
                }
            };
            Thread worker = virtual ? virtualThreads.newThread(work) : new Thread(work, "bench-" + i);
            workers.add(worker);
            worker.start();
        }
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore = os.getProcessCpuTime();
        long begin = System.nanoTime();
        deadline[0] = begin + duration.toNanos();
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        long cpu = os.getProcessCpuTime() - cpuBefore;
        if (failures.get() > 0) {
            throw new IllegalStateException(
                    peer.name() + " failed " + failures.get() + " time(s) in " + workload + " T=" + threads);
        }
        exclusion.check(peer.name());
        long total = Arrays.stream(cycles).sum();
        int sampleCount = Arrays.stream(counts).sum();
        long[] all = new long[sampleCount];
        int at = 0;
        for (int i = 0; i < threads; i++) {
            System.arraycopy(samples[i], 0, all, at, counts[i]);
            at += counts[i];
        }
        Arrays.sort(all);
        BitSet distinct = new BitSet();
        for (BitSet set : touched) {
            distinct.or(set);
        }
        return new Samples(total, seconds, cpu, all, manyNames ? distinct.cardinality() : Double.NaN);
    }

    private static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /** The options this bench takes; docs/PERFORMANCE.md explains each. */
    private static final List<String> OPTIONS = List.of(
            "engines",
            "peers",
            "workloads",
            "threads",
            "seconds",
            "warmup",
            "waiters",
            "names",
            "held",
            "lease",
            "redis",
            "out",
            "progress",
            "progress-every");

    private static Map<String, String> parse(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--help") || args[i].equals("-h")) {
                System.out.println(
                        "usage: java -jar cerberus-bench.jar [--" + String.join(" VALUE] [--", OPTIONS) + " VALUE]\n"
                                + "defaults: --engines " + String.join(",", EngineGroups.PEERS.keySet())
                                + " --threads 1,4,16 --seconds 3 --warmup 1"
                                + " --workloads " + String.join(",", DEFAULT_WORKLOADS)
                                + " (also many-names, contended-2p, held-locks, async, virtual-threads, semaphore,"
                                + " semaphore-contended, wake-up) --waiters 1000"
                                + " --names 100000"
                                + " --held 10000 --lease 2 --progress auto --progress-every 30; every option is explained in docs/PERFORMANCE.md");
                System.exit(0);
            }
            if (args[i].startsWith("--") && !OPTIONS.contains(args[i].substring(2))) {
                throw new IllegalArgumentException(
                        "unknown option '" + args[i] + "'; the options are --" + String.join(", --", OPTIONS));
            }
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException(
                        "arguments are --name value pairs; '" + args[i] + "' is not followed by a value");
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }
}
