package io.cerberus.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs the benchmark matrix against one Redis server (started here unless {@code --redis
 * host:port} is given): every peer, workload and thread count in the same run, one after the
 * other, and prints a markdown report with ratios to Redisson.
 *
 * <pre>
 * java -cp ... io.cerberus.bench.Bench [--threads 1,4,16] [--seconds 3] [--warmup 1]
 *      [--workloads uncontended,contended,idempotent,replay] [--peers cerberus,redisson,spring,setnx,roundtrip,jvm]
 *      [--redis host:port] [--out report.md]
 * </pre>
 */
public final class Bench {
    private static final int MAX_SAMPLES = 1 << 20;
    /** Workloads of locks: a cycle is lock, unlock. */
    static final List<String> LOCK_WORKLOADS = List.of("uncontended", "contended");
    /**
     * Workloads of the idempotency guard: a cycle is one guarded call, of a new key each time
     * ({@code idempotent}: claim and complete) or of the thread's one key ({@code replay}: a duplicate).
     */
    static final List<String> GUARD_WORKLOADS = List.of("idempotent", "replay");

    private Bench() {
    }

    /** One measured cell of the matrix. */
    record Result(String workload, String peer, int threads, long cycles, double seconds, long p50, long p99, long p999, long max,
            double cpuMicrosPerCycle, double commandsPerCycle) {
        double perSecond() {
            return cycles / seconds;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        List<Integer> threads = Arrays.stream(options.getOrDefault("threads", "1,4,16").split(",")).map(Integer::valueOf).toList();
        Duration seconds = Duration.ofMillis((long) (Double.parseDouble(options.getOrDefault("seconds", "3")) * 1000));
        Duration warmup = Duration.ofMillis((long) (Double.parseDouble(options.getOrDefault("warmup", "1")) * 1000));
        List<String> workloads = List.of(options.getOrDefault("workloads", "uncontended,contended,idempotent,replay").split(","));
        List<String> peerNames = List.of(options.getOrDefault("peers", "cerberus,redisson,spring,setnx,roundtrip,jvm").split(","));
        for (int t : threads) {
            if (t < 1 || t > 64) {
                throw new IllegalArgumentException("--threads must be 1 to 64 each, was " + t);
            }
        }
        try (RedisProcess redis = options.containsKey("redis") ? RedisProcess.external(options.get("redis")) : RedisProcess.start()) {
            List<Result> results = run(redis, threads, seconds, warmup, workloads, peerNames);
            String report = Report.markdown(results, redis.version(), threads, seconds);
            System.out.print(report);
            if (options.containsKey("out")) {
                Files.writeString(Path.of(options.get("out")), report);
            }
        }
    }

    static List<Result> run(RedisProcess redis, List<Integer> threads, Duration seconds, Duration warmup, List<String> workloads,
            List<String> peerNames) throws Exception {
        for (String workload : workloads) {
            if (!LOCK_WORKLOADS.contains(workload) && !GUARD_WORKLOADS.contains(workload)) {
                throw new IllegalArgumentException("unknown workload '" + workload + "'; workloads: uncontended, contended, idempotent, replay");
            }
        }
        Map<String, Supplier<Peer>> lockPeers = new LinkedHashMap<>();
        Map<String, Supplier<Peer>> guardPeers = new LinkedHashMap<>();
        for (String name : peerNames) {
            switch (name) {
                case "cerberus" -> {
                    lockPeers.put(name, () -> Peers.cerberus(redis.uri()));
                    guardPeers.put(name, () -> Peers.cerberusGuard(redis.uri()));
                }
                case "redisson" -> lockPeers.put(name, () -> Peers.redisson(redis.host(), redis.port()));
                case "spring" -> lockPeers.put(name, () -> Peers.springRedis(redis.host(), redis.port()));
                case "setnx" -> guardPeers.put(name, () -> Peers.setNxFloor(redis.host(), redis.port()));
                case "roundtrip" -> {
                    lockPeers.put(name, () -> Peers.roundTripFloor(redis.host(), redis.port()));
                    guardPeers.put(name, () -> Peers.roundTripFloor(redis.host(), redis.port()));
                }
                case "jvm" -> lockPeers.put(name, Peers::jvmFloor);
                default -> throw new IllegalArgumentException("unknown peer '" + name
                        + "'; peers: cerberus, redisson, spring, setnx, roundtrip, jvm");
            }
        }
        List<Result> results = new ArrayList<>();
        // warm every peer up first, so that the first cells of the matrix do not pay for the JIT compiler
        int warmCell = 0;
        for (String workload : workloads) {
            for (Supplier<Peer> supplier : (GUARD_WORKLOADS.contains(workload) ? guardPeers : lockPeers).values()) {
                try (Peer peer = supplier.get()) {
                    measure(peer, workload, 4, warmup.multipliedBy(2), "warm" + warmCell++);
                }
            }
        }
        RedisClient admin = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> stats = admin.connect()) {
            int cell = 0;
            for (String workload : workloads) {
                Map<String, Supplier<Peer>> peers = GUARD_WORKLOADS.contains(workload) ? guardPeers : lockPeers;
                for (int t : threads) {
                    for (Map.Entry<String, Supplier<Peer>> entry : peers.entrySet()) {
                        cell++;
                        try (Peer peer = entry.getValue().get()) {
                            measure(peer, workload, t, warmup, "w" + cell);
                            long before = commandCalls(stats);
                            Result result = measure(peer, workload, t, seconds, "m" + cell);
                            long commands = commandCalls(stats) - before - 1;
                            results.add(new Result(result.workload(), result.peer(), t, result.cycles(), result.seconds(), result.p50(),
                                    result.p99(), result.p999(), result.max(), result.cpuMicrosPerCycle(),
                                    entry.getKey().equals("jvm") ? 0 : (double) commands / Math.max(1, result.cycles())));
                            System.err.printf(Locale.ROOT, "%-12s %-30s T=%-3d %,12.0f cycles/s  p99 %,8.1f µs%n", workload, peer.name(), t,
                                    result.perSecond(), result.p99() / 1000.0);
                        }
                    }
                }
            }
        } finally {
            admin.shutdown();
        }
        return results;
    }

    private static long commandCalls(StatefulRedisConnection<String, String> stats) {
        long total = 0;
        for (String line : stats.sync().info("commandstats").split("\r?\n")) {
            int calls = line.indexOf("calls=");
            if (line.startsWith("cmdstat_") && calls > 0) {
                int end = line.indexOf(',', calls);
                total += Long.parseLong(line.substring(calls + 6, end));
            }
        }
        return total;
    }

    /** Runs T threads for the duration; each cycle is lock → unlock; latency is the time to acquire. */
    private static Result measure(Peer peer, String workload, int threads, Duration duration, String cell) throws InterruptedException {
        long[][] samples = new long[threads][];
        long[] cycles = new long[threads];
        int[] counts = new int[threads];
        AtomicInteger failures = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        long[] deadline = new long[1];
        for (int i = 0; i < threads; i++) {
            int index = i;
            samples[i] = new long[Math.min(MAX_SAMPLES, 1 << 16)];
            String name = workload.equals("contended") ? "bench-" + cell : "bench-" + cell + "-" + i;
            boolean freshNames = workload.equals("idempotent");
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    while (System.nanoTime() - deadline[0] < 0) {
                        long t0 = System.nanoTime();
                        Peer.Held held = peer.lock(freshNames ? name + "-" + cycles[index] : name);
                        long waited = System.nanoTime() - t0;
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
            }, "bench-" + i);
            workers.add(worker);
            worker.start();
        }
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
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
            throw new IllegalStateException(peer.name() + " failed " + failures.get() + " time(s) in " + workload + " T=" + threads);
        }
        long total = Arrays.stream(cycles).sum();
        int sampleCount = Arrays.stream(counts).sum();
        long[] all = new long[sampleCount];
        int at = 0;
        for (int i = 0; i < threads; i++) {
            System.arraycopy(samples[i], 0, all, at, counts[i]);
            at += counts[i];
        }
        Arrays.sort(all);
        return new Result(workload, peer.name(), threads, total, seconds, percentile(all, 0.50), percentile(all, 0.99),
                percentile(all, 0.999), all.length == 0 ? 0 : all[all.length - 1], total == 0 ? 0 : cpu / 1000.0 / total, 0);
    }

    private static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("arguments are --name value pairs; '" + args[i] + "' is not followed by a value");
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }
}
