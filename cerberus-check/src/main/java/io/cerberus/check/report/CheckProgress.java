package io.cerberus.check.report;

import io.cerberus.check.console.ProgressLine;
import io.cerberus.check.fault.FaultInjector;
import io.cerberus.check.log.HoldLog;
import io.cerberus.check.log.Register;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What a {@code cerberus check} run has shown so far, for its {@link ProgressLine}: counted while it
 * runs from the same files the judge reads at the end, and only what can be counted exactly before
 * the end. Each {@link #text()} reads the lines the event logs ({@code *.log} in the run's
 * directory) gained since the last call: grants ({@code ACQ}), operations acknowledged
 * ({@code ACK}), stale writes refused, faults injected and confirmed. The lock check reads the
 * registers too (at most {@value #REGISTERS_PER_TICK} per call, in turn): writes accepted minus the
 * value are the lost updates so far, which make a run UNSAFE whatever follows. The idempotency
 * check reads its ledger: effects applied, and those applied to a key already applied (a duplicate
 * so far — the judge decides at the end whether a fault explains it). Overlaps and tokens going
 * backwards are judged at the end only: telling a late grant from a backwards token needs the pauses
 * around the grant. Not thread-safe: one caller (the line's thread).
 */
public final class CheckProgress {
    private static final int REGISTERS_PER_TICK = 64;

    /** Where the run is. */
    enum Phase {
        STARTING,
        RUNNING,
        STOPPING,
        JUDGING
    }

    /**
     * The counts so far.
     *
     * @param holds grants (lock check) or submissions acknowledged (idempotency check)
     * @param effects effects applied (idempotency check; 0 otherwise)
     * @param duplicates effects applied to a key already applied (idempotency check)
     * @param lostUpdates writes undone by a stale one, over the registers read so far (lock check)
     */
    record Counts(
            long holds,
            long effects,
            long duplicates,
            long faults,
            long confirmed,
            long unconfirmed,
            long staleStopped,
            long lostUpdates) {}

    private final Path dir;
    private final boolean idempotency;
    private final long durationNanos;
    private final List<Register> registers;
    private final Map<Path, Long> offsets = new HashMap<>();
    private final long[] lost;
    private final Set<Long> keys = new HashSet<>();
    private int nextRegister;
    private long holds;
    private long effects;
    private long faults;
    private long confirmed;
    private long unconfirmed;
    private long stale;
    private volatile Phase phase = Phase.STARTING;
    private volatile long runningSince;
    private final long created = System.nanoTime();

    /**
     * @param dir the run's directory ({@code --out})
     * @param idempotency whether it is {@code --idempotency}'s run (its ledger is {@code ledger.txt} there)
     * @param durationNanos how long the clients run ({@code --duration})
     * @param registers the lock check's registers, by lock (empty for the idempotency check)
     */
    public CheckProgress(Path dir, boolean idempotency, long durationNanos, List<Register> registers) {
        this.dir = dir;
        this.idempotency = idempotency;
        this.durationNanos = durationNanos;
        this.registers = List.copyOf(registers);
        this.lost = new long[registers.size()];
    }

    /** The clients run: the duration counts from now. Any thread. */
    public void running() {
        runningSince = System.nanoTime();
        phase = Phase.RUNNING;
    }

    /** The duration is over: the clients are being stopped. Any thread. */
    public void stopping() {
        phase = Phase.STOPPING;
    }

    /** The clients have stopped: the logs are being judged. Any thread. */
    public void judging() {
        phase = Phase.JUDGING;
    }

    /** @return the line's text now, after reading what the files gained */
    public String text() {
        Counts counts = read();
        Phase now = phase;
        long elapsed = now == Phase.STARTING ? System.nanoTime() - created : System.nanoTime() - runningSince;
        return format(now, idempotency, elapsed, durationNanos, counts);
    }

    /**
     * The line, without escape codes: {@code check 0:12 elapsed, 0:08 left | holds 341 | faults 4 (3 confirmed) |
     * stale writes 2 | lost updates 0} (stale writes: refused by fencing); {@code UNSAFE} at its head once an update was
     * lost, so that a line cut to the terminal's width still shows it.
     *
     * @param elapsed since the clients ran (while starting: since the run began)
     */
    static String format(Phase phase, boolean idempotency, long elapsed, long duration, Counts counts) {
        StringBuilder line = new StringBuilder(idempotency ? "check --idempotency " : "check ");
        if (!idempotency && counts.lostUpdates() > 0) {
            line.append("UNSAFE ");
        }
        switch (phase) {
            case STARTING -> line.append("starting clients ").append(ProgressLine.clock(elapsed));
            case RUNNING ->
                line.append(ProgressLine.clock(elapsed))
                        .append(" elapsed, ")
                        .append(ProgressLine.clock(duration - elapsed))
                        .append(" left");
            case STOPPING -> line.append(ProgressLine.clock(elapsed)).append(" elapsed, stopping clients");
            default -> line.append(ProgressLine.clock(elapsed)).append(" elapsed, judging");
        }
        if (idempotency) {
            line.append(" | acknowledged ")
                    .append(counts.holds())
                    .append(", effects ")
                    .append(counts.effects());
        } else {
            line.append(" | holds ").append(counts.holds());
        }
        line.append(" | faults ")
                .append(counts.faults())
                .append(" (")
                .append(counts.confirmed())
                .append(" confirmed");
        if (counts.unconfirmed() > 0) {
            line.append(", ").append(counts.unconfirmed()).append(" NOT");
        }
        line.append(')');
        if (idempotency) {
            line.append(" | duplicates ").append(counts.duplicates());
        } else {
            line.append(" | stale writes ")
                    .append(counts.staleStopped())
                    .append(" | lost updates ")
                    .append(counts.lostUpdates());
        }
        return line.toString();
    }

    private Counts read() {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path log : files.filter(file -> file.getFileName().toString().endsWith(".log"))
                    .sorted()
                    .toList()) {
                for (String line : newLines(log)) {
                    count(line);
                }
            }
            if (idempotency) {
                for (String line : newLines(dir.resolve("ledger.txt"))) {
                    effects++;
                    keys.add(Long.parseLong(line.substring(0, line.indexOf(' '))));
                }
            }
        } catch (IOException | RuntimeException e) {
            // a file being created or a line half-read: the next tick reads it
        }
        for (int i = 0; i < Math.min(REGISTERS_PER_TICK, registers.size()); i++) {
            int lock = nextRegister;
            nextRegister = (nextRegister + 1) % registers.size();
            try {
                Register.State state = registers.get(lock).read();
                lost[lock] = state.accepted() - state.value();
            } catch (RuntimeException e) {
                // not created yet, or being written: the next round reads it
            }
        }
        long lostUpdates = 0;
        for (long l : lost) {
            lostUpdates += l;
        }
        return new Counts(holds, effects, effects - keys.size(), faults, confirmed, unconfirmed, stale, lostUpdates);
    }

    private void count(String line) {
        if (line.startsWith("ACQ ") || line.startsWith("ACK ")) {
            holds++;
        } else if ((line.startsWith("WRITE ") || line.startsWith("READ ")) && line.endsWith(" stale")) {
            stale++;
        } else if (line.startsWith("EFFECT ") && idempotency && !Files.exists(dir.resolve("ledger.txt"))) {
            // effects kept in a table (--effect table): the clients log each one they saw commit
            effects++;
            keys.add(HoldLog.Event.parse(line).token());
        } else if (line.startsWith("FAULT ")) {
            String detail = HoldLog.Event.parse(line).detail();
            if (detail.startsWith("confirmed ")) {
                confirmed++;
            } else if (detail.startsWith("unconfirmed ")) {
                unconfirmed++;
            } else {
                String first = detail.split("[ :]", 2)[0];
                if (FaultInjector.KINDS.contains(first)) {
                    faults++;
                }
            }
        }
    }

    /** @return the whole lines the file gained since the last call; none if it does not exist yet */
    private List<String> newLines(Path file) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        long from = offsets.getOrDefault(file, 0L);
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (length <= from) {
                return List.of();
            }
            byte[] bytes = new byte[(int) Math.min(length - from, 64L << 20)];
            in.seek(from);
            in.readFully(bytes);
            int end = bytes.length;
            while (end > 0 && bytes[end - 1] != '\n') {
                end--;
            }
            offsets.put(file, from + end);
            return end == 0 ? List.of() : List.of(new String(bytes, 0, end, StandardCharsets.UTF_8).split("\n"));
        }
    }
}
