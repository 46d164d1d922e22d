package io.cerberus.local;

import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One lock file as this JVM sees it: its single open channel, its two lock regions and its
 * contents. Callers serialise all use through the {@link FileEntry} lock.
 *
 * <p>Layout (big-endian):
 * <pre>
 * [0, 8)        fencing counter: the last fencing token issued for this lock (0: none yet)
 * [8, 16)       magic "CRBLOCK1"
 * [16, 1040)    record of the last exclusive holder: mode (1 byte, 0 = none), fencing token (8),
 *               holder length (2), holder description in UTF-8 (at most 1013 bytes)
 * [1040, 3088)  identity: namespace length (2) and UTF-8, name length (2) and UTF-8
 * </pre>
 * A new file's first token is the current time in microseconds, not 1: tokens keep increasing when
 * the file is lost and made again (a cleaned {@code /tmp}), as long as the lock was taken fewer
 * than a million times a second on average and the clock is not set back.
 *
 * <p>The OS locks are byte ranges independent of the contents (past the end of the file is fine):
 * byte 0 is the lock (exclusive for exclusive and write holds, shared for reads), byte 1 the counter
 * mutex, held for the microseconds of an acquisition's counter and record updates or an inspection.
 *
 * <p>The channel is an {@link AsynchronousFileChannel}: interrupting a thread while it reads or
 * writes a {@code FileChannel} closes the channel, which silently drops every lock this process
 * holds on the file. Reads and writes run on the channel's pool threads and are awaited here
 * without reacting to interrupts (the interrupt status is kept for the caller).
 */
final class FileLockFile implements AutoCloseable {
    static final long LOCK_REGION = 0;
    static final long MUTEX_REGION = 1;
    static final int COUNTER_OFFSET = 0;
    static final int MAGIC_OFFSET = 8;
    static final int RECORD_OFFSET = 16;
    static final int RECORD_SIZE = 1024;
    static final int IDENTITY_OFFSET = RECORD_OFFSET + RECORD_SIZE;
    static final int IDENTITY_SIZE = 2048;
    static final int FILE_SIZE = IDENTITY_OFFSET + IDENTITY_SIZE;
    private static final byte[] MAGIC = "CRBLOCK1".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_HOLDER_BYTES = RECORD_SIZE - 1 - 8 - 2;
    private static final long MUTEX_SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long MUTEX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    /**
     * The record of an exclusive holder, as written in the file.
     *
     * @param mode how it holds
     * @param fence its fencing token
     * @param holder its description
     */
    record HolderRecord(LockMode mode, long fence, String holder) {}

    private final Path path;
    private final AsynchronousFileChannel channel;

    private FileLockFile(Path path, AsynchronousFileChannel channel) {
        this.path = path;
        this.channel = channel;
    }

    /**
     * Opens the file, creating it when asked, and writes its identity if it is new.
     *
     * @param path the file
     * @param key the lock it belongs to, or null if unknown (then nothing is written)
     * @param create whether to create a missing file
     * @return the open file
     * @throws IOException if it cannot be opened (NoSuchFileException if missing and not created)
     */
    static FileLockFile open(Path path, LockKey key, boolean create) throws IOException {
        Set<OpenOption> options = new HashSet<>();
        options.add(StandardOpenOption.READ);
        options.add(StandardOpenOption.WRITE);
        options.add(LinkOption.NOFOLLOW_LINKS);
        if (create) {
            options.add(StandardOpenOption.CREATE);
        }
        AsynchronousFileChannel channel = AsynchronousFileChannel.open(path, options, null);
        FileLockFile file = new FileLockFile(path, channel);
        try {
            if (key != null && channel.size() < FILE_SIZE) {
                // Every process writes the same bytes, and never over the counter or the record.
                file.write(ByteBuffer.wrap(MAGIC), MAGIC_OFFSET);
                file.write(identity(key), IDENTITY_OFFSET);
            }
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
        return file;
    }

    Path path() {
        return path;
    }

    /**
     * Tries to take the lock region without waiting.
     *
     * @param shared shared (read) or exclusive
     * @return the lock, or null if another process holds it incompatibly
     */
    FileLock tryLock(boolean shared) throws IOException {
        return tryRegion(LOCK_REGION, shared);
    }

    /**
     * Takes the counter mutex, waiting at most {@code timeoutNanos}: it is held only for a few file
     * operations, so a longer wait means its holder is paused (stopped, swapping).
     *
     * @param timeoutNanos how long to try
     * @return the mutex, or null if it could not be had in time
     */
    FileLock lockMutex(long timeoutNanos) throws IOException {
        long start = System.nanoTime();
        boolean interrupted = Thread.interrupted(); // parking would return at once while interrupted
        try {
            while (true) {
                FileLock mutex = tryRegion(MUTEX_REGION, false);
                if (mutex != null) {
                    return mutex;
                }
                long waited = System.nanoTime() - start;
                if (waited >= timeoutNanos) {
                    return null;
                }
                if (waited < MUTEX_SPIN_NANOS) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(MUTEX_PARK_NANOS);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private FileLock tryRegion(long position, boolean shared) throws IOException {
        try {
            return channel.tryLock(position, 1, shared);
        } catch (OverlappingFileLockException e) {
            // Held by this JVM outside our registry: another copy of these classes (another class
            // loader) uses the file. Busy to us, which keeps exclusion.
            return null;
        }
    }

    /** @return the last fencing token issued, 0 for a new file */
    long readCounter() throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(8);
        read(buffer, COUNTER_OFFSET);
        return buffer.position() == 8 ? buffer.flip().getLong() : 0;
    }

    /**
     * @param last the counter as read
     * @return the next fencing token
     */
    static long nextFence(long last) {
        if (last > 0) {
            return last + 1;
        }
        Instant now = Instant.now();
        return Math.max(1, Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000L), now.getNano() / 1000));
    }

    /** Writes the fencing counter alone (a read acquisition). */
    void writeCounter(long fence) throws IOException {
        write(ByteBuffer.allocate(8).putLong(fence).flip(), COUNTER_OFFSET);
    }

    /** Writes the fencing counter and the record of a new exclusive holder, in one write. */
    void writeCounterAndRecord(long fence, LockMode mode, String holder) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(RECORD_OFFSET + RECORD_SIZE);
        buffer.putLong(fence).put(MAGIC).put((byte) (mode.ordinal() + 1)).putLong(fence);
        ByteBuffer text = ByteBuffer.allocate(MAX_HOLDER_BYTES);
        CharsetEncoder encoder = StandardCharsets.UTF_8
                .newEncoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        encoder.encode(CharBuffer.wrap(holder), text, true); // stops at a character boundary when full
        text.flip();
        buffer.putShort((short) text.remaining()).put(text).flip();
        write(buffer, COUNTER_OFFSET);
    }

    /** Marks the holder record empty (a release). */
    void clearRecord() throws IOException {
        write(ByteBuffer.allocate(1), RECORD_OFFSET);
    }

    /** @return the holder record, empty if none or unreadable */
    Optional<HolderRecord> readRecord() throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(RECORD_SIZE);
        read(buffer, RECORD_OFFSET);
        buffer.flip();
        if (buffer.remaining() < 11) {
            return Optional.empty();
        }
        int mode = buffer.get();
        long fence = buffer.getLong();
        int length = buffer.getShort() & 0xffff;
        if (mode < 1 || mode > LockMode.values().length || length > buffer.remaining()) {
            return Optional.empty();
        }
        byte[] holder = new byte[length];
        buffer.get(holder);
        return Optional.of(
                new HolderRecord(LockMode.values()[mode - 1], fence, new String(holder, StandardCharsets.UTF_8)));
    }

    /** @return the lock this file belongs to, as written in it; empty if missing or unreadable */
    Optional<LockKey> readIdentity() throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(IDENTITY_SIZE);
        read(buffer, IDENTITY_OFFSET);
        buffer.flip();
        String namespace = readText(buffer);
        String name = readText(buffer);
        return namespace == null || name == null || namespace.isEmpty() || name.isEmpty()
                ? Optional.empty()
                : Optional.of(new LockKey(namespace, name));
    }

    private static String readText(ByteBuffer buffer) {
        if (buffer.remaining() < 2) {
            return null;
        }
        int length = buffer.getShort() & 0xffff;
        if (length > buffer.remaining()) {
            return null;
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static ByteBuffer identity(LockKey key) {
        byte[] namespace = key.namespace().getBytes(StandardCharsets.UTF_8);
        byte[] name = key.name().getBytes(StandardCharsets.UTF_8);
        if (4 + namespace.length + name.length > IDENTITY_SIZE) {
            throw new IllegalArgumentException("namespace and lock name must fit in " + (IDENTITY_SIZE - 4)
                    + " bytes of UTF-8 for the file: engine, were " + (namespace.length + name.length));
        }
        return ByteBuffer.allocate(IDENTITY_SIZE)
                .putShort((short) namespace.length)
                .put(namespace)
                .putShort((short) name.length)
                .put(name)
                .position(0);
    }

    private void read(ByteBuffer buffer, long position) throws IOException {
        long start = position - buffer.position();
        while (buffer.hasRemaining()) {
            int n = await(channel.read(buffer, start + buffer.position()));
            if (n < 0) {
                return;
            }
        }
    }

    private void write(ByteBuffer buffer, long position) throws IOException {
        long start = position - buffer.position();
        while (buffer.hasRemaining()) {
            await(channel.write(buffer, start + buffer.position()));
        }
    }

    /** Waits for an I/O operation of the channel without reacting to interrupts. */
    static <T> T await(Future<T> future) throws IOException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof IOException io) {
                        throw io;
                    }
                    throw new IOException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Closes the channel: drops every lock this process holds on the file, so only when none is held. */
    @Override
    public void close() throws IOException {
        channel.close();
    }
}
