package io.cerberus.bench;

import io.cerberus.check.console.ProgressLine;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The bench's status line on standard error: which cell of how many runs, the time since the start,
 * and an estimate of the time left (the mean time of the cells done so far, times the cells left). A
 * cell here is one workload at one thread count on one engine, all its peers measured; a workload an
 * engine has no peer for is taken off the total when the engine's turn comes.
 *
 * <p>How the line is written is {@code cerberus check}'s {@link ProgressLine}: {@code auto} on a
 * terminal rewrites it in place every second and clears it before whatever else is printed on
 * standard error (each cell's result); {@code line}, or {@code auto} when standard error is not a
 * terminal, prints a plain line every {@code every}; {@code none} prints nothing. The report
 * (standard output, {@code --out}) is not touched. Thread-safe.
 */
final class BenchProgress implements AutoCloseable {
    /** What {@code --progress} takes. */
    static final List<String> MODES = ProgressLine.MODES;

    /** A line that shows nothing, for callers that run cells without one. */
    static final BenchProgress NONE = new BenchProgress(0);

    private final long start = System.nanoTime();
    private ProgressLine line;
    private int total;
    private int done;
    private long doneNanos;
    private String cell = "starting";

    private BenchProgress(int total) {
        this.total = total;
    }

    /**
     * Starts the line on {@link System#err}.
     *
     * @param mode {@code auto}, {@code line} or {@code none}
     * @param every how often a plain line is printed, at least a second
     * @param total how many cells the run has
     * @throws IllegalArgumentException if the mode is none of {@link #MODES}, or {@code every} is under a second
     */
    static BenchProgress start(String mode, Duration every, int total) {
        if (!MODES.contains(mode)) {
            throw new IllegalArgumentException("--progress takes " + String.join(", ", MODES) + ", was '" + mode + "'");
        }
        if (every.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException(
                    "--progress-every must be at least 1 (seconds), was " + every.toMillis() / 1000.0);
        }
        BenchProgress progress = new BenchProgress(total);
        progress.line = ProgressLine.start(
                mode, every, new PrintWriter(System.err, false, StandardCharsets.UTF_8), progress::text);
        return progress;
    }

    /**
     * Starts a line on the given stream, live or plain whatever the stream is; a live one wraps {@link System#err}
     * until it is closed.
     *
     * @param width the terminal's width, for a live line
     */
    static BenchProgress open(PrintStream err, boolean live, Duration every, int total, int width) {
        BenchProgress progress = new BenchProgress(total);
        PrintWriter writer = new PrintWriter(err, false, StandardCharsets.UTF_8);
        progress.line = live
                ? ProgressLine.live(writer, progress::text, width)
                : ProgressLine.plain(writer, progress::text, every);
        return progress;
    }

    /** A cell starts. */
    synchronized void cell(String label) {
        cell = label;
    }

    /** Cells are done. */
    synchronized void done(int cells) {
        done += cells;
        doneNanos = System.nanoTime() - start;
    }

    /** Cells the run will not have after all (an engine without a peer for a workload). */
    synchronized void skip(int cells) {
        total -= cells;
    }

    private synchronized String text() {
        return format(done, total, cell, System.nanoTime() - start, doneNanos);
    }

    /**
     * The line, without escape codes: {@code bench cell 7 of 36: redis contended T=4 | 3:12 elapsed, about 13:40 left}.
     *
     * @param doneNanos the time from the start to the end of the last cell done
     */
    static String format(int done, int total, String cell, long elapsedNanos, long doneNanos) {
        String left = done == 0
                ? "estimating the time left"
                : "about "
                        + ProgressLine.clock(
                                Math.max(0, doneNanos / done * (total - done) - (elapsedNanos - doneNanos)))
                        + " left";
        return "bench cell " + Math.min(done + 1, total) + " of " + total + ": " + cell + " | "
                + ProgressLine.clock(elapsedNanos) + " elapsed, " + left;
    }

    /** Stops the line: a live one is cleared, and standard error is what it was before. Safe to call more than once. */
    @Override
    public void close() {
        if (line != null) {
            line.close();
        }
    }
}
