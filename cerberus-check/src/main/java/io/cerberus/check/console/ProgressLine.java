package io.cerberus.check.console;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A long run's status line, on standard error so that standard output stays the report. The text
 * comes from a supplier, asked at each tick.
 *
 * <ul>
 *   <li><b>live</b> ({@code auto} on a terminal): every second the line is rewritten in place
 *       (carriage return, the text cut to the terminal's width, clear to the end of the line);
 *       {@link #close()} clears it, so what is printed next starts on a clean line.</li>
 *   <li><b>plain</b> ({@code line}, or {@code auto} when standard error is not a terminal): every
 *       {@code every}, the text as a line of its own — no carriage return, no escape code.</li>
 *   <li><b>none</b>: nothing.</li>
 * </ul>
 *
 * Standard error counts as a terminal when the JVM has a console (standard input and output are
 * terminals), {@code TERM} is not {@code dumb}, and, where {@code /proc} tells, file descriptor 2 is a
 * terminal device too. While a live line is open, {@link System#err} is wrapped so that what others
 * print there first clears the line (the next tick draws it again). Thread-safe; one daemon thread
 * per open line.
 */
public final class ProgressLine implements AutoCloseable {
    /** What {@code --progress} takes. */
    public static final List<String> MODES = List.of("auto", "line", "none");

    private static final String CLEAR_TO_END = "\u001b[K";
    private static final Duration LIVE_EVERY = Duration.ofSeconds(1);

    private final PrintWriter err;
    private final boolean live;
    private final Supplier<String> text;
    private final int width;
    private final ScheduledExecutorService ticks;
    private boolean shown;
    private boolean closed;
    private java.io.PrintStream unwrapped;
    private java.io.PrintStream wrapped;

    private ProgressLine(PrintWriter err, boolean live, Supplier<String> text, Duration every, int width) {
        this.err = err;
        this.live = live;
        this.text = text;
        this.width = width;
        if (every == null) {
            this.ticks = null;
            return;
        }
        if (live) {
            // what others print on standard error (a client's complaint) first clears the line; the next tick draws it
            // again
            unwrapped = System.err;
            wrapped = new java.io.PrintStream(
                    new ClearingStream(unwrapped), true, java.nio.charset.StandardCharsets.UTF_8);
            System.setErr(wrapped);
        }
        this.ticks = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "cerberus-progress");
            thread.setDaemon(true);
            return thread;
        });
        long millis = every.toMillis();
        ticks.scheduleAtFixedRate(this::tick, millis, millis, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts the line.
     *
     * @param mode {@code auto}, {@code line} or {@code none}
     * @param every how often a plain line is printed, at least one second
     * @param err where the line goes (standard error)
     * @param text the line's text now; asked once per tick, from the line's own thread
     * @return the running line; close it before printing the report
     * @throws IllegalArgumentException if the mode is none of {@link #MODES}, or {@code every} is under a second
     */
    public static ProgressLine start(String mode, Duration every, PrintWriter err, Supplier<String> text) {
        check(mode, every);
        return switch (mode) {
            case "none" -> new ProgressLine(err, false, text, null, Integer.MAX_VALUE);
            case "auto" ->
                stderrIsTerminal()
                        ? live(err, text, terminalWidth())
                        : new ProgressLine(err, false, text, every, Integer.MAX_VALUE);
            default -> new ProgressLine(err, false, text, every, Integer.MAX_VALUE);
        };
    }

    /**
     * Starts a live line, whatever {@code err} is: rewritten every second, and {@link System#err} wrapped
     * so that others' text there first clears it, until it is closed.
     *
     * @param width the terminal's width: the text is cut to one less
     */
    public static ProgressLine live(PrintWriter err, Supplier<String> text, int width) {
        return new ProgressLine(err, true, text, LIVE_EVERY, width);
    }

    /**
     * Starts a plain line, whatever {@code err} is: the text as a line of its own every {@code every}.
     *
     * @param every how often, at least a millisecond
     */
    public static ProgressLine plain(PrintWriter err, Supplier<String> text, Duration every) {
        return new ProgressLine(err, false, text, every, Integer.MAX_VALUE);
    }

    /**
     * @throws IllegalArgumentException if the mode is none of {@link #MODES}, or {@code every} is under a second
     */
    public static void check(String mode, Duration every) {
        if (!MODES.contains(mode)) {
            throw new IllegalArgumentException("--progress takes " + String.join(", ", MODES) + ", was '" + mode + "'");
        }
        if (every.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("--progress-every must be at least 1s, was " + Durations.format(every));
        }
    }

    /** @return whether this line is rewritten in place (a terminal) rather than printed as plain lines */
    boolean live() {
        return live;
    }

    private synchronized void tick() {
        if (closed) {
            return;
        }
        String now;
        try {
            now = text.get();
        } catch (RuntimeException e) {
            now = "progress unknown: " + e.getMessage();
        }
        if (live) {
            err.print("\r" + cut(now, width) + CLEAR_TO_END);
            shown = true;
        } else {
            err.println(now);
        }
        err.flush();
    }

    /** Stops the line; a live one is cleared. Safe to call more than once. */
    @Override
    public void close() {
        if (ticks != null) {
            ticks.shutdownNow();
            try {
                ticks.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (shown) {
                err.print("\r" + CLEAR_TO_END);
                err.flush();
            }
            if (wrapped != null && System.err == wrapped) {
                System.setErr(unwrapped);
            }
        }
    }

    /** Standard error while a live line is shown: others' text first clears the line. */
    private final class ClearingStream extends java.io.OutputStream {
        private final java.io.PrintStream target;

        ClearingStream(java.io.PrintStream target) {
            this.target = target;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            synchronized (ProgressLine.this) {
                if (shown) {
                    err.print("\r" + CLEAR_TO_END);
                    err.flush();
                    shown = false;
                }
                target.write(bytes, offset, length);
            }
        }

        @Override
        public void flush() {
            target.flush();
        }
    }

    /** @return the text, at most {@code width - 1} characters (a full line would wrap on some terminals) */
    static String cut(String text, int width) {
        return text.length() < width ? text : text.substring(0, Math.max(0, width - 4)) + "...";
    }

    /** @return the terminal's width as {@code stty} tells it, else {@code COLUMNS} when the shell exports it, else 80 */
    private static int terminalWidth() {
        try {
            String[] size = io.cerberus.servers.ManagedProcess.run(
                            "stty", List.of("sh", "-c", "stty size < /dev/tty"), Duration.ofSeconds(2))
                    .trim()
                    .split("\\s+");
            if (size.length == 2 && Integer.parseInt(size[1]) >= 20) {
                return Integer.parseInt(size[1]);
            }
        } catch (io.cerberus.servers.ServerException | NumberFormatException e) {
            // no stty or no terminal: the environment's word, or 80
        }
        try {
            int columns = Integer.parseInt(
                    System.getenv().getOrDefault("COLUMNS", "80").trim());
            return columns >= 20 ? columns : 80;
        } catch (NumberFormatException e) {
            return 80;
        }
    }

    /** @return whether standard error is a terminal that understands a carriage return and clear-to-end */
    static boolean stderrIsTerminal() {
        if (System.console() == null || "dumb".equals(System.getenv("TERM"))) {
            return false;
        }
        Path fd2 = Path.of("/proc/self/fd/2");
        if (!Files.exists(Path.of("/proc/self/fd"))) {
            return true; // no /proc to ask: standard input and output are terminals, so standard error most likely is
        }
        try {
            String target = Files.readSymbolicLink(fd2).toString().toLowerCase(Locale.ROOT);
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * @param nanos a non-negative time
     * @return it as a clock shows it: {@code 0:07}, {@code 12:30}, {@code 1:02:03}
     */
    public static String clock(long nanos) {
        long s = Math.max(0, TimeUnit.NANOSECONDS.toSeconds(nanos));
        return s >= 3600
                ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
