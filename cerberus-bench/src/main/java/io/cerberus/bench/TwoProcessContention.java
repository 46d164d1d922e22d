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
import java.util.Map;

/**
 * The {@code contended-2p} workload: {@code contended} (T threads on one name, a cycle is a hand-off)
 * with the threads split over two JVMs, so that hand-offs cross processes as they do between
 * services: this JVM runs ⌈T/2⌉ threads, a child JVM ({@link ContendedWorker}, started per cell with
 * this JVM's java command and class path) runs ⌊T/2⌋ threads of the same peer, built from the same
 * {@link PeerSpec}, against the same server and the same lock name. T = 1 cells are not run.
 *
 * <p>A cell, in step with the child over its standard input and output: both build the peer and warm
 * up alone on names of their own until their JIT compiler is quiet (the child is a fresh JVM, whose
 * compiler is otherwise still busy in the measured part); the child says {@code READY}; on
 * {@code WARM} both warm up together on the cell's warm-up name and the child says {@code WARMED};
 * then the server's request count is read and on {@code GO} both measure for the same time on the
 * cell's name; the child writes its sorted latencies to a file and says {@code RESULT}. The cell's
 * figures are of both JVMs: cycles and client CPU added up over the longer of the two measured times
 * (they start a pipe write apart), percentiles and max over the latencies of both; the request count
 * is the server's, so it covers both. A child that says {@code FAILED}, ends, or does not answer
 * within its deadline is destroyed and fails the run, with the end of its standard error (which is
 * forwarded to this JVM's, prefixed, as it comes).
 */
final class TwoProcessContention {
    /** The child's start (JVM, class loading, connecting) on top of its warm-up. */
    private static final Duration START_DEADLINE = Duration.ofSeconds(60);
    /** Slack on top of a phase's own time (warm-up, measured time) before the child counts as hung. */
    private static final Duration SLACK = Duration.ofSeconds(30);

    private TwoProcessContention() {
    }

    /** @return the threads this JVM runs of T */
    static int here(int threads) {
        return (threads + 1) / 2;
    }

    /** @return the threads the child runs of T */
    static int inChild(int threads) {
        return threads / 2;
    }

    /**
     * Runs the cells of one engine: by thread count (T ≥ 2) by shared peer.
     *
     * @throws IllegalStateException if a peer fails in either JVM or the child does not answer in time
     */
    static List<Bench.Result> run(EngineGroup group, List<Integer> threads, Duration seconds, Duration warmup) throws Exception {
        List<Bench.Result> results = new ArrayList<>();
        if (threads.stream().anyMatch(t -> t < 2)) {
            System.err.printf(Locale.ROOT, "%-8s %s: T=1 is not run (two processes need two threads)%n", group.engine(), Bench.TWO_PROCESSES);
        }
        // no warm-up pass over the peers first, as the other workloads have: every cell warms both JVMs up, alone then together
        int cell = 0;
        for (int t : threads) {
            if (t < 2) {
                continue;
            }
            for (Map.Entry<String, PeerSpec> entry : group.sharedPeers().entrySet()) {
                Bench.Result result = cell(group, entry.getValue(), t, seconds, warmup, group.engine() + "-2p-" + ++cell);
                results.add(result);
                System.err.printf(Locale.ROOT, "%-8s %-12s %-34s T=%-3d %,12.0f cycles/s  p99 %,10.1f µs  %d+%d threads, child %.0f%%%n",
                        group.engine(), Bench.TWO_PROCESSES, result.peer(), t, result.perSecond(), result.p99() / 1000.0, here(t), inChild(t),
                        100 * result.childShare());
            }
        }
        return results;
    }

    private static Bench.Result cell(EngineGroup group, PeerSpec spec, int threads, Duration seconds, Duration warmup, String cell)
            throws Exception {
        Path samplesFile = Files.createTempFile("cerberus-bench-" + cell + "-", ".samples");
        try (ChildJvm child = ChildJvm.start(spec.peer() + " on " + spec.engine() + ", " + inChild(threads) + " thread(s), cell " + cell,
                ContendedWorker.arguments(inChild(threads), cell, warmup, seconds, samplesFile, spec));
                Peer peer = spec.build()) {
            Bench.warmUntilCompiled(peer, "contended", here(threads), warmup, cell + "p", 0);
            child.await("READY", START_DEADLINE.plus(warmup.multipliedBy(Bench.MAX_WARM_ROUNDS)));
            child.send("WARM");
            Bench.sample(peer, "contended", here(threads), warmup, cell + "w", 0);
            child.await("WARMED", warmup.plus(SLACK));
            boolean counted = group.requests() != null;
            long before = counted ? group.requests().getAsLong() : 0;
            child.send("GO");
            Bench.Samples mine = Bench.sample(peer, "contended", here(threads), seconds, cell + "m", 0);
            String[] result = child.await("RESULT", seconds.plus(SLACK)).split(" ");
            long requests = counted ? group.requests().getAsLong() - before : 0;
            Bench.Samples theirs = new Bench.Samples(Long.parseLong(result[1]), Long.parseLong(result[2]) / 1e9, Long.parseLong(result[3]),
                    readSamples(samplesFile, Integer.parseInt(result[4])), Double.NaN);
            Bench.Samples both = mine.and(theirs);
            return new Bench.Result(group.engine(), Bench.TWO_PROCESSES, peer.name(), threads, both.cycles(), both.seconds(),
                    both.percentile(0.50), both.percentile(0.99), both.percentile(0.999), both.max(),
                    both.cycles() == 0 ? 0 : both.cpuNanos() / 1000.0 / both.cycles(),
                    counted ? (double) requests / Math.max(1, both.cycles()) : Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                    both.cycles() == 0 ? Double.NaN : (double) theirs.cycles() / both.cycles());
        } finally {
            Files.deleteIfExists(samplesFile);
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
