package io.cerberus.check.log;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The safety checker's event log: one line per event, {@code KIND CLIENT LOCK TOKEN NANOS [DETAIL]},
 * times from {@link System#nanoTime()} (one machine, so one monotonic clock for every process).
 * Each line is one unbuffered write, so a process killed with SIGKILL loses no line it wrote.
 * LOCK is the index of the lock the event is about ({@code --locks N}: 0 to N-1), or
 * {@value #NO_LOCK} for an event about no lock in particular (a fault, a renewal round, the end).
 * CLIENT names the process, or {@code PROCESS.THREAD} when a client runs several loops.
 *
 * <p>Kinds: {@code ACQ} granted, {@code READ} the register was read, {@code WRITE} written
 * ({@code ok} or {@code stale}; timed when the write was sent), {@code REL} released, {@code LOST} told of a loss, {@code FAULT}
 * injected (CLIENT is the target, TOKEN -1, DETAIL the fault), {@code ENGINE} what the client saw of
 * the engine ({@code acquire failed}, {@code renewal unreachable}, {@code acquire 12ms}, {@code release 12ms}), {@code END}
 * the client stopped.
 */
public final class HoldLog implements AutoCloseable {
    /** The lock index of an event about no lock in particular. */
    public static final int NO_LOCK = -1;

    /** One event. */
    public record Event(String kind, String client, int lock, long token, long nanos, String detail) {

        /** An event about no lock in particular, or about the only lock of a one-lock run. */
        public Event(String kind, String client, long token, long nanos, String detail) {
            this(kind, client, NO_LOCK, token, nanos, detail);
        }

        public static Event parse(String line) {
            String[] parts = line.split(" ", 6);
            if (parts.length < 5) {
                throw new IllegalArgumentException("not an event line: '" + line + "'");
            }
            return new Event(
                    parts[0],
                    parts[1],
                    Integer.parseInt(parts[2]),
                    Long.parseLong(parts[3]),
                    Long.parseLong(parts[4]),
                    parts.length == 6 ? parts[5] : "");
        }

        public String line() {
            return kind + " " + client + " " + lock + " " + token + " " + nanos
                    + (detail.isEmpty() ? "" : " " + detail);
        }
    }

    private final FileOutputStream out;

    public HoldLog(Path file) {
        try {
            this.out = new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the event log " + file, e);
        }
    }

    /** Logs an event about no lock in particular (or about the only lock of a one-lock run). */
    public void log(String kind, String client, long token, String detail) {
        log(kind, client, NO_LOCK, token, detail);
    }

    /** Logs an event about lock number {@code lock}, happening now. */
    public void log(String kind, String client, int lock, long token, String detail) {
        log(kind, client, lock, token, System.nanoTime(), detail);
    }

    /**
     * Logs an event about lock number {@code lock} that happened at {@code nanos}, read from
     * {@link System#nanoTime()} when it happened: a pause of the process before the line is written
     * (which may wait for another thread's line) does not move the event after it.
     */
    public synchronized void log(String kind, String client, int lock, long token, long nanos, String detail) {
        Event event = new Event(kind, client, lock, token, nanos, detail);
        try {
            out.write((event.line() + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the event log", e);
        }
    }

    /** @return every event of the {@code *.log} files in the directory, in time order */
    public static List<Event> readAll(Path dir) {
        List<Event> events = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .toList()) {
                events.addAll(read(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the event logs in " + dir, e);
        }
        events.sort(java.util.Comparator.comparingLong(Event::nanos));
        return events;
    }

    /** @return the events of one log, in the order written; a last line not yet ended is left out */
    public static List<Event> read(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        List<Event> events = new ArrayList<>();
        for (String line : text.substring(0, text.lastIndexOf('\n') + 1).split("\n")) {
            if (!line.isBlank()) {
                events.add(Event.parse(line));
            }
        }
        return events;
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the event log", e);
        }
    }

    /** @return a failure as one line of a log's detail: its class and the first line of its message */
    public static String oneLine(Throwable failure) {
        String message = String.valueOf(failure.getMessage());
        int newline = message.indexOf('\n');
        return failure.getClass().getSimpleName() + " " + (newline < 0 ? message : message.substring(0, newline));
    }
}
