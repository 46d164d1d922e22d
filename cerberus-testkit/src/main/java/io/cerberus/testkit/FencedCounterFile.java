package io.cerberus.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * A counter in a file shared by processes, guarded the way a resource protected by fencing tokens
 * is: a write names the engine that granted the writer's lease and its fencing token, and is
 * refused when that engine has already shown a larger token. Tokens of different engines are never
 * compared (each engine counts on its own), so across an engine switch only the lock-delay keeps
 * two holders apart.
 *
 * <p>{@link #read()} takes no operating-system lock, as a holder that trusts its lock reads; so
 * two holders at once both read the same value and one increment is lost, which
 * {@link #value(Path)} against the accepted increments shows. {@link #write} runs under
 * {@link FileChannel#lock()} (between processes) and this object's monitor (between the threads
 * of one process, which the operating-system lock does not separate). Layout: the value (8 bytes),
 * then the length (4 bytes) and UTF-8 text of {@code engine=largest token} lines; written at once.
 * Thread-safe.
 */
public final class FencedCounterFile implements AutoCloseable {
    private static final int VALUE_BYTES = Long.BYTES;
    private final FileChannel channel;

    private FencedCounterFile(FileChannel channel) {
        this.channel = channel;
    }

    /**
     * Opens the counter, creating an empty one (value 0) if the file does not exist.
     *
     * @param file the counter file
     * @return the open counter; close it
     * @throws UncheckedIOException if the file cannot be opened
     */
    public static FencedCounterFile open(Path file) {
        try {
            return new FencedCounterFile(FileChannel.open(
                    file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE));
        } catch (IOException e) {
            throw new UncheckedIOException("could not open the counter " + file, e);
        }
    }

    /**
     * @param file a counter file
     * @return its value, 0 if it was never written
     * @throws UncheckedIOException if the file cannot be read
     */
    public static long value(Path file) {
        try (FencedCounterFile counter = open(file)) {
            return counter.read();
        }
    }

    /**
     * Reads the value without any lock.
     *
     * @return the value, 0 if it was never written
     * @throws UncheckedIOException if the file cannot be read
     */
    public long read() {
        try {
            ByteBuffer value = ByteBuffer.allocate(VALUE_BYTES);
            while (value.hasRemaining() && channel.read(value, value.position()) > 0) {
                // a short read goes on where it stopped
            }
            return value.hasRemaining() ? 0 : value.getLong(0);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the counter", e);
        }
    }

    /**
     * Writes a value if the fencing token is not older than the largest one the engine has shown
     * this counter.
     *
     * @param value the new value
     * @param engine the name of the engine that granted the writer's lease
     * @param fencingToken the lease's fencing token
     * @return true if written; false if refused as a stale write (a larger token of that engine was seen)
     * @throws UncheckedIOException if the file cannot be locked, read or written
     */
    public synchronized boolean write(long value, String engine, long fencingToken) {
        try {
            FileLock betweenProcesses = channel.lock();
            try {
                Map<String, Long> largest = tokens();
                Long seen = largest.get(engine);
                if (seen != null && fencingToken < seen) {
                    return false;
                }
                largest.put(engine, fencingToken);
                StringBuilder text = new StringBuilder();
                largest.forEach((name, token) ->
                        text.append(name).append('=').append(token).append('\n'));
                byte[] table = text.toString().getBytes(StandardCharsets.UTF_8);
                ByteBuffer record = ByteBuffer.allocate(VALUE_BYTES + Integer.BYTES + table.length);
                record.putLong(value).putInt(table.length).put(table).flip();
                while (record.hasRemaining()) {
                    channel.write(record, record.position());
                }
                return true;
            } finally {
                betweenProcesses.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the counter", e);
        }
    }

    /** The largest token written per engine; read under the lock. */
    private Map<String, Long> tokens() throws IOException {
        Map<String, Long> largest = new TreeMap<>();
        ByteBuffer length = ByteBuffer.allocate(Integer.BYTES);
        channel.read(length, VALUE_BYTES);
        if (length.hasRemaining()) {
            return largest;
        }
        ByteBuffer table = ByteBuffer.allocate(length.getInt(0));
        while (table.hasRemaining() && channel.read(table, VALUE_BYTES + Integer.BYTES + table.position()) > 0) {
            // a short read goes on where it stopped
        }
        for (String line : new String(table.array(), 0, table.position(), StandardCharsets.UTF_8).split("\n")) {
            int equals = line.lastIndexOf('=');
            if (equals > 0) {
                largest.put(line.substring(0, equals), Long.parseLong(line.substring(equals + 1)));
            }
        }
        return largest;
    }

    /**
     * Closes the file.
     *
     * @throws UncheckedIOException if closing fails
     */
    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException("could not close the counter", e);
        }
    }
}
