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
 * The child JVM of a {@code contended-2p} cell and peer (not a command of its own:
 * {@link TwoProcessContention} starts it). It builds the peer of a {@link PeerSpec} and runs
 * {@code contended} with its threads in step with the parent, on the parent's commands, one per line
 * of standard input:
 * <ul>
 * <li>{@code ALONE <name> <ms>}: warms up on {@code bench-<name>} in rounds of {@code ms} until its JIT
 *     compiler is quiet (as a cell of the other workloads does, {@link Bench#warmUntilCompiled}), says {@code READY};
 * <li>{@code WARM <name> <ms>}: runs on {@code bench-<name>} for {@code ms} (with the parent), says {@code WARMED};
 * <li>{@code RUN <name> <ms>}: measures on {@code bench-<name>} for {@code ms} (with the parent), keeps the
 *     figures, says {@code RAN <cycles> <measured nanoseconds>} of this slice;
 * <li>{@code END}: writes the sorted latencies of all its {@code RUN}s (nanoseconds, big-endian longs) to the
 *     samples file and says {@code RESULT <cycles> <measured nanoseconds> <process CPU nanoseconds> <samples>};
 *     then closes the peer and exits.
 * </ul>
 * Any failure says {@code FAILED <exception>} (the stack trace goes to standard error) and exits with
 * status 1; the end of standard input before {@code END} exits with status 2. Standard output carries
 * nothing else: {@code System.out} is standard error here.
 */
final class ContendedWorker {
    private ContendedWorker() {}

    /**
     * @return the arguments of {@link #main}: {@code THREADS SAMPLES_FILE ENGINE PEER POOL_SIZE}; the
     *     peer's address goes in the environment ({@link PeerSpec#environment()})
     */
    static List<String> arguments(int threads, Path samplesFile, PeerSpec spec) {
        List<String> args = new ArrayList<>(List.of(Integer.toString(threads), samplesFile.toString()));
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
            Path samplesFile = Path.of(args[1]);
            PeerSpec spec = PeerSpec.parse(List.of(args), 2, System.getenv());
            Peer peer = spec.build();
            try {
                Bench.Samples measured = null;
                boolean ended = false;
                while (!ended) {
                    String line = commands.readLine();
                    if (line == null) {
                        System.err.println("the parent closed standard input before END; exiting");
                        System.exit(2);
                    }
                    String[] command = line.strip().split(" ");
                    switch (command[0]) {
                        case "ALONE" -> {
                            Bench.warmUntilCompiled(peer, "contended", threads, millis(command), command[1], 0);
                            say(protocol, "READY");
                        }
                        case "WARM" -> {
                            Bench.sample(peer, "contended", threads, millis(command), command[1], 0);
                            say(protocol, "WARMED");
                        }
                        case "RUN" -> {
                            Bench.Samples samples =
                                    Bench.sample(peer, "contended", threads, millis(command), command[1], 0);
                            measured = measured == null ? samples : measured.then(samples);
                            say(protocol, "RAN " + samples.cycles() + " " + Math.round(samples.seconds() * 1e9));
                        }
                        case "END" -> {
                            if (measured == null) {
                                throw new IllegalStateException("END before any RUN");
                            }
                            writeSamples(samplesFile, measured.sorted());
                            say(
                                    protocol,
                                    "RESULT " + measured.cycles() + " " + Math.round(measured.seconds() * 1e9) + " "
                                            + measured.cpuNanos() + " " + measured.sorted().length);
                            ended = true;
                        }
                        default -> throw new IllegalStateException("unknown command from the parent: '" + line + "'");
                    }
                }
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

    private static Duration millis(String[] command) {
        if (command.length != 3) {
            throw new IllegalStateException("expected '" + command[0] + " <name> <ms>' from the parent, got '"
                    + String.join(" ", command) + "'");
        }
        return Duration.ofMillis(Long.parseLong(command[2]));
    }

    private static void say(PrintStream protocol, String line) {
        protocol.println(line);
        protocol.flush();
    }

    private static void writeSamples(Path file, long[] sorted) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
            for (long sample : sorted) {
                out.writeLong(sample);
            }
        }
    }
}
