package io.cerberus.bench;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The {@code contended-2p} workload: {@code contended} (T threads on one name, a cycle is a hand-off)
 * with the threads split over two JVMs, so that hand-offs cross processes as they do between
 * services: this JVM runs ⌈T/2⌉ threads, a child JVM ({@link ContendedWorker}, started per cell and
 * peer with this JVM's java command and class path) runs ⌊T/2⌋ threads of the same peer, built from
 * the same {@link PeerSpec}, against the same server and the same lock name. T = 1 cells are not run.
 *
 * <p>The peers of a cell take turns, as in the other workloads ({@link Bench#SLICES}): every peer's
 * child is started at once and every peer is built here. In step with each child over its standard
 * input and output: both warm up alone on names of their own until their JIT compiler is quiet
 * ({@code ALONE}; the child is a fresh JVM, whose compiler is otherwise still busy in the measured
 * part), one peer after the other; then each peer warms up once more with its child on a shared name
 * ({@code WARM}); then the measured time is cut into slices per peer, taken in the order A B, B A, …:
 * for a slice the server's request count is read and on {@code RUN} both measure for the slice on the
 * slice's name, and the child says how many cycles it ran in how long. On {@code END} the child writes its sorted latencies of all its slices to a file and
 * says {@code RESULT}. The cell's figures are of both JVMs: cycles and client CPU added up over the
 * longer of the two measured times (a slice starts a pipe write apart), percentiles and max over the
 * latencies of both; the request count is the server's, so it covers both. A child that says
 * {@code FAILED}, ends, or does not answer within its deadline is destroyed and fails the run, with the
 * end of its standard error (which is forwarded to this JVM's, prefixed, as it comes).
 */
final class TwoProcessContention {
    /** The child's start (JVM, class loading, connecting) on top of its warm-up. */
    private static final Duration START_DEADLINE = Duration.ofSeconds(60);
    /** Slack on top of a phase's own time (warm-up, measured time) before the child counts as hung. */
    private static final Duration SLACK = Duration.ofSeconds(30);

    private TwoProcessContention() {}

    /** @return the threads this JVM runs of T */
    static int here(int threads) {
        return (threads + 1) / 2;
    }

    /** @return the threads the child runs of T */
    static int inChild(int threads) {
        return threads / 2;
    }

    /**
     * Runs the cells of one engine: by thread count (T ≥ 2), the shared peers of a thread count in turns.
     *
     * @throws IllegalStateException if a peer fails in either JVM or a child does not answer in time
     */
    static List<Bench.Result> run(EngineGroup group, List<Integer> threads, Duration seconds, Duration warmup)
            throws Exception {
        List<Bench.Result> results = new ArrayList<>();
        if (threads.stream().anyMatch(t -> t < 2)) {
            System.err.printf(
                    Locale.ROOT,
                    "%-8s %s: T=1 is not run (two processes need two threads)%n",
                    group.engine(),
                    Bench.TWO_PROCESSES);
        }
        // no warm-up pass over the peers first, as the other workloads have: every cell warms both JVMs up, alone then
        // together
        int cell = 0;
        List<PeerSpec> specs = List.copyOf(group.sharedPeers().values());
        for (int t : threads) {
            if (t < 2) {
                continue;
            }
            for (Bench.Result result : cellInTurns(group, specs, t, seconds, warmup, cell)) {
                results.add(result);
                System.err.printf(
                        Locale.ROOT,
                        "%-8s %-12s %-34s T=%-3d %,12.0f cycles/s  p99 %,10.1f µs  %d+%d threads, child %.0f%%%n",
                        group.engine(),
                        Bench.TWO_PROCESSES,
                        result.peer(),
                        t,
                        result.perSecond(),
                        result.p99() / 1000.0,
                        here(t),
                        inChild(t),
                        100 * result.childShare());
            }
            cell += specs.size();
        }
        return results;
    }

    private static List<Bench.Result> cellInTurns(
            EngineGroup group, List<PeerSpec> specs, int threads, Duration seconds, Duration warmup, int firstCell)
            throws Exception {
        int n = specs.size();
        String[] cells = new String[n];
        Path[] samplesFiles = new Path[n];
        List<ChildJvm> children = new ArrayList<>();
        List<Peer> peers = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                cells[i] = group.engine() + "-2p-" + (firstCell + i + 1);
                samplesFiles[i] = Files.createTempFile("cerberus-bench-" + cells[i] + "-", ".samples");
                PeerSpec spec = specs.get(i);
                children.add(ChildJvm.start(
                        spec.peer() + " on " + spec.engine() + ", " + inChild(threads) + " thread(s), cell " + cells[i],
                        ContendedWorker.arguments(inChild(threads), samplesFiles[i], spec),
                        spec.environment()));
            }
            for (PeerSpec spec : specs) {
                peers.add(spec.build());
            }
            // alone: each JVM on names of its own, the two of a peer at the same time, one peer after the other
            for (int i = 0; i < n; i++) {
                children.get(i).send("ALONE " + cells[i] + "c " + warmup.toMillis());
                Bench.warmUntilCompiled(peers.get(i), "contended", here(threads), warmup, cells[i] + "p", 0);
                children.get(i).await("READY", START_DEADLINE.plus(warmup.multipliedBy(Bench.MAX_WARM_ROUNDS)));
            }
            for (int i = 0; i < n; i++) {
                children.get(i).send("WARM " + cells[i] + "w " + warmup.toMillis());
                Bench.sample(peers.get(i), "contended", here(threads), warmup, cells[i] + "w", 0);
                children.get(i).await("WARMED", warmup.plus(SLACK));
            }
            boolean counted = group.requests() != null;
            Bench.Samples[] mine = new Bench.Samples[n];
            double[][] rounds = new double[n][Bench.SLICES];
            long[] requests = new long[n];
            Duration slice = seconds.dividedBy(Bench.SLICES);
            for (int round = 0; round < Bench.SLICES; round++) {
                for (int k = 0; k < n; k++) {
                    int i = round % 2 == 0 ? k : n - 1 - k;
                    String name = cells[i] + "m" + round;
                    long before = counted ? group.requests().getAsLong() : 0;
                    children.get(i).send("RUN " + name + " " + slice.toMillis());
                    Bench.Samples samples = Bench.sample(peers.get(i), "contended", here(threads), slice, name, 0);
                    String[] ran =
                            children.get(i).await("RAN", slice.plus(SLACK)).split(" ");
                    requests[i] += counted ? group.requests().getAsLong() - before : 0;
                    // both JVMs' hand-offs of the slice, over the longer of the two measured times, as for the whole
                    // cell
                    rounds[i][round] = (samples.cycles() + Long.parseLong(ran[1]))
                            / Math.max(samples.seconds(), Long.parseLong(ran[2]) / 1e9);
                    mine[i] = mine[i] == null ? samples : mine[i].then(samples);
                }
            }
            List<Bench.Result> row = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                children.get(i).send("END");
                String[] result = children.get(i).await("RESULT", SLACK).split(" ");
                Bench.Samples theirs = new Bench.Samples(
                        Long.parseLong(result[1]),
                        Long.parseLong(result[2]) / 1e9,
                        Long.parseLong(result[3]),
                        readSamples(samplesFiles[i], Integer.parseInt(result[4])),
                        Double.NaN);
                Bench.Samples both = mine[i].and(theirs);
                row.add(new Bench.Result(
                        group.engine(),
                        Bench.TWO_PROCESSES,
                        peers.get(i).name(),
                        threads,
                        both.cycles(),
                        both.seconds(),
                        both.percentile(0.50),
                        both.percentile(0.99),
                        both.percentile(0.999),
                        both.max(),
                        both.cycles() == 0 ? 0 : both.cpuNanos() / 1000.0 / both.cycles(),
                        counted ? (double) requests[i] / Math.max(1, both.cycles()) : Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        both.cycles() == 0 ? Double.NaN : (double) theirs.cycles() / both.cycles(),
                        rounds[i]));
            }
            return row;
        } finally {
            for (ChildJvm child : children) {
                child.close();
            }
            for (Peer peer : peers) {
                peer.close();
            }
            for (Path file : samplesFiles) {
                if (file != null) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    private static long[] readSamples(Path file, int count) {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
            long[] samples = new long[count];
            for (int i = 0; i < count; i++) {
                samples[i] = in.readLong();
            }
            return samples;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the child's " + count + " latency samples from " + file, e);
        }
    }
}
