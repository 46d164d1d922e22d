package io.cerberus.bench;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The child JVM of a {@code contended-2p} cell (not a command of its own: {@link TwoProcessContention}
 * starts it). It builds the peer of a {@link PeerSpec} and runs {@code contended} with its threads in
 * step with the parent, over standard input and output:
 * <ol>
 * <li>builds the peer, warms up alone on {@code bench-<cell>c} until its JIT compiler is quiet (as a
 *     cell of the other workloads does, {@link Bench#warmUntilCompiled}), says {@code READY};
 * <li>on {@code WARM}, warms up on {@code bench-<cell>w} (with the parent), says {@code WARMED};
 * <li>on {@code GO}, measures on {@code bench-<cell>m} (with the parent), writes its sorted latencies
 *     (nanoseconds, big-endian longs) to the samples file and says
 *     {@code RESULT <cycles> <measured nanoseconds> <process CPU nanoseconds> <samples>}; then closes the peer and exits.
 * </ol>
 * Any failure says {@code FAILED <exception>} (the stack trace goes to standard error) and exits with
 * status 1; the end of standard input before a command exits with status 2. Standard output carries
 * nothing else: {@code System.out} is standard error here.
 */
final class ContendedWorker {
    private ContendedWorker() {
    }

    /** @return the arguments of {@link #main}: {@code THREADS CELL WARMUP_MS MEASURED_MS SAMPLES_FILE ENGINE PEER ADDRESS POOL_SIZE} */
    static List<String> arguments(int threads, String cell, Duration warmup, Duration measured, Path samplesFile, PeerSpec spec) {
        List<String> args = new ArrayList<>(List.of(Integer.toString(threads), cell, Long.toString(warmup.toMillis()),
                Long.toString(measured.toMillis()), samplesFile.toString()));
        args.addAll(spec.arguments());
        return args;
    }

    /** @param args see {@link #arguments} */
    public static void main(String[] args) {
        PrintStream protocol = System.out;
        // a library that prints must not write into the protocol
        System.setOut(System.err);
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            int threads = Integer.parseInt(args[0]);
            String cell = args[1];
            Duration warmup = Duration.ofMillis(Long.parseLong(args[2]));
            Duration measured = Duration.ofMillis(Long.parseLong(args[3]));
            Path samplesFile = Path.of(args[4]);
            PeerSpec spec = PeerSpec.parse(List.of(args), 5);
            Peer peer = spec.build();
            try {
                Bench.warmUntilCompiled(peer, "contended", threads, warmup, cell + "c", 0);
                say(protocol, "READY");
                awaitCommand(commands, "WARM");
                Bench.sample(peer, "contended", threads, warmup, cell + "w", 0);
                say(protocol, "WARMED");
                awaitCommand(commands, "GO");
                Bench.Samples samples = Bench.sample(peer, "contended", threads, measured, cell + "m", 0);
                writeSamples(samplesFile, samples.sorted());
                say(protocol, "RESULT " + samples.cycles() + " " + Math.round(samples.seconds() * 1e9) + " " + samples.cpuNanos() + " "
                        + samples.sorted().length);
            } finally {
                peer.close();
            }
        } catch (Throwable e) {
            e.printStackTrace();
            say(protocol, "FAILED " + e.toString().replace('\n', ' '));
            System.exit(1);
        }
        // a peer's client may leave non-daemon threads behind
        System.exit(0);
    }

    private static void say(PrintStream protocol, String line) {
        protocol.println(line);
        protocol.flush();
    }

    private static void awaitCommand(BufferedReader commands, String command) throws IOException {
        String line = commands.readLine();
        if (line == null) {
            System.err.println("the parent closed standard input before " + command + "; exiting");
            System.exit(2);
        }
        if (!line.strip().equals(command)) {
            throw new IllegalStateException("expected " + command + " from the parent, got '" + line + "'");
        }
    }

    private static void writeSamples(Path file, long[] sorted) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
            for (long sample : sorted) {
                out.writeLong(sample);
            }
        }
    }
}
