package io.cerberus.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The bench's status line on standard error: which cell of how many runs, the time since the start,
 * and an estimate of the time left (the mean time of the cells done so far, times the cells left). A
 * cell here is one workload at one thread count on one engine, all its peers measured; a workload an
 * engine has no peer for is taken off the total when the engine's turn comes.
 *
 * <p>{@code auto} on a terminal: the line is rewritten in place every second (carriage return, the
 * text cut to the terminal's width, clear to the end of the line); while it is shown, standard error
 * is wrapped so that whatever else is printed there (each cell's result) first clears it, and the
 * next tick draws it again below. {@code line}, or {@code auto} when standard error is not a
 * terminal: a plain line every {@code every}, never an escape code. {@code none}: nothing. The
 * report (standard output, {@code --out}) is not touched. Thread-safe.
 */
final class BenchProgress implements AutoCloseable {
    /** What {@code --progress} takes. */
    static final List<String> MODES = List.of("auto", "line", "none");

    /** A line that shows nothing, for callers that run cells without one. */
    static final BenchProgress NONE = new BenchProgress(null, false, 0, null, Integer.MAX_VALUE);

    private static final String CLEAR = "\r\u001b[K";

    private final PrintStream err;
    private final boolean live;
    private final int width;
    private final long start = System.nanoTime();
    private final ScheduledExecutorService ticks;
    private PrintStream wrapped;
    private PrintStream unwrapped;
    private int total;
    private int done;
    private long doneNanos;
    private String cell = "starting";
    private boolean shown;
    private boolean closed;

    private BenchProgress(PrintStream err, boolean live, int total, Duration every, int width) {
        this.err = err;
        this.live = live;
        this.total = total;
        this.width = width;
        if (every == null) {
            this.ticks = null;
            return;
        }
        if (live) {
            wrapped = new PrintStream(new ClearingStream(), true, StandardCharsets.UTF_8);
            unwrapped = System.err;
            System.setErr(wrapped);
        }
        this.ticks = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "bench-progress");
            thread.setDaemon(true);
            return thread;
        });
        ticks.scheduleAtFixedRate(this::tick, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
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
            throw new IllegalArgumentException("--progress-every must be at least 1 (seconds), was " + every.toMillis() / 1000.0);
        }
        if (mode.equals("none")) {
            return new BenchProgress(System.err, false, total, null, Integer.MAX_VALUE);
        }
        boolean terminal = mode.equals("auto") && stderrIsTerminal();
        return open(System.err, terminal, terminal ? Duration.ofSeconds(1) : every, total, terminal ? terminalWidth() : Integer.MAX_VALUE);
    }

    /**
     * Starts a line on the given stream, live or plain whatever the stream is; a live one wraps {@link System#err}
     * until it is closed.
     *
     * @param width the terminal's width, for a live line
     */
    static BenchProgress open(PrintStream err, boolean live, Duration every, int total, int width) {
        return new BenchProgress(err, live, total, every, width);
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

    /**
     * The line, without escape codes: {@code bench cell 7 of 36: redis contended T=4 | 3:12 elapsed, about 13:40 left}.
     *
     * @param doneNanos the time from the start to the end of the last cell done
     */
    static String format(int done, int total, String cell, long elapsedNanos, long doneNanos) {
        String left = done == 0 ? "estimating the time left"
                : "about " + clock(Math.max(0, doneNanos / done * (total - done) - (elapsedNanos - doneNanos))) + " left";
        return "bench cell " + Math.min(done + 1, total) + " of " + total + ": " + cell + " | " + clock(elapsedNanos) + " elapsed, " + left;
    }

    private synchronized void tick() {
        if (closed) {
            return;
        }
        String text = format(done, total, cell, System.nanoTime() - start, doneNanos);
        if (live) {
            err.print("\r" + (text.length() < width ? text : text.substring(0, Math.max(0, width - 4)) + "...") + "\u001b[K");
            shown = true;
        } else {
            err.println(text);
        }
        err.flush();
    }

    /** Stops the line: a live one is cleared, and standard error is what it was before. Safe to call more than once. */
    @Override
    public void close() {
        if (ticks == null) {
            return;
        }
        ticks.shutdownNow();
        try {
            ticks.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (shown) {
                err.print(CLEAR);
                err.flush();
            }
            if (wrapped != null && System.err == wrapped) {
                System.setErr(unwrapped);
            }
        }
    }

    /** Standard error while a live line is shown: others' text first clears the line. */
    private final class ClearingStream extends OutputStream {
        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            synchronized (BenchProgress.this) {
                if (shown) {
                    err.print(CLEAR);
                    shown = false;
                }
                err.write(bytes, offset, length);
            }
        }

        @Override
        public void flush() {
            err.flush();
        }
    }

    /** @return a time as a clock shows it: {@code 0:07}, {@code 12:30}, {@code 1:02:03} */
    static String clock(long nanos) {
        long s = Math.max(0, TimeUnit.NANOSECONDS.toSeconds(nanos));
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }

    /**
     * @return whether standard error is a terminal: the JVM has a console, {@code TERM} is not {@code dumb}, and where
     *     {@code /proc} tells, file descriptor 2 is a terminal device
     */
    private static boolean stderrIsTerminal() {
        if (System.console() == null || "dumb".equals(System.getenv("TERM"))) {
            return false;
        }
        if (!Files.exists(Path.of("/proc/self/fd"))) {
            return true;
        }
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** @return the terminal's width as {@code stty} tells it, else {@code COLUMNS}, else 80 */
    private static int terminalWidth() {
        try {
            String[] size = io.cerberus.servers.ManagedProcess.run("stty", List.of("sh", "-c", "stty size < /dev/tty"), Duration.ofSeconds(2))
                    .trim().split("\\s+");
            if (size.length == 2 && Integer.parseInt(size[1]) >= 20) {
                return Integer.parseInt(size[1]);
            }
        } catch (io.cerberus.servers.ServerException | NumberFormatException e) {
            // no stty or no terminal: the environment's word, or 80
        }
        try {
            int columns = Integer.parseInt(System.getenv().getOrDefault("COLUMNS", "80").trim());
            return columns >= 20 ? columns : 80;
        } catch (NumberFormatException e) {
            return 80;
        }
    }
}
