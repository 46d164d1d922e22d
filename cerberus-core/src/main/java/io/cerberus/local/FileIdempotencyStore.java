package io.cerberus.local;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32;

/**
 * The {@code file:} idempotency store: one small file per key under {@code DIR/idempotency/},
 * shared by the processes of one machine.
 *
 * <p><b>Atomicity.</b> Every change reads, decides and writes the record while holding an
 * operating-system lock on its file (and, in this JVM, one of {@link #STRIPES} striped locks, as
 * POSIX locks belong to the process). A record that is released, or found expired by the purge, is
 * first overwritten with a tombstone and then unlinked, both under the lock: a process that waited
 * for the lock on the unlinked file sees the tombstone and opens the path again, so two processes
 * can never work on two different files of one key.
 *
 * <p><b>Clocks.</b> An IN_PROGRESS lease ends on the machine's monotonic clock, stamped with the
 * kernel's boot id: wall-clock steps neither free a running attempt's key early nor keep it
 * longer, and after a reboot every lease of the previous boot is over (its processes are gone).
 * Where no boot id can be read (not Linux) the wall clock is used. A retention ends on the wall
 * clock (it may be months, across reboots).
 *
 * <p><b>Durability.</b> No fsync: records survive crashes of processes, not of the machine. A record
 * torn by a crash mid-write fails its checksum and counts as free (as if its completion had failed).
 *
 * <p><b>Format</b> (version 1): {@code "CIR1"}, state byte (0 in progress, 1 completed,
 * 2 tombstone), failure byte, clock (boot id or {@code wall}), expiry (long: monotonic nanos or
 * wall millis; {@code Long.MAX_VALUE} for ever), token, fingerprint (modified UTF-8), result length
 * and bytes, CRC-32 of everything before it. File name: SHA-256 of the record id, hex, {@code .rec}.
 */
final class FileIdempotencyStore implements IdempotencyStore {
    private static final System.Logger LOG = System.getLogger(FileIdempotencyStore.class.getName());
    static final String DIRECTORY = "idempotency";
    static final int STRIPES = 64;
    private static final byte[] MAGIC = "CIR1".getBytes(StandardCharsets.US_ASCII);
    private static final byte IN_PROGRESS = 0;
    private static final byte COMPLETED = 1;
    private static final byte TOMBSTONE = 2;
    private static final String WALL = "wall";
    private static final long PURGE_EVERY_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final ReentrantLock[] LOCKS = new ReentrantLock[STRIPES];
    private static final String BOOT_ID = bootId();

    static {
        for (int i = 0; i < STRIPES; i++) {
            LOCKS[i] = new ReentrantLock();
        }
    }

    private final Path directory;
    private final String uri;
    private volatile long nextPurge = System.nanoTime() + PURGE_EVERY_NANOS;

    /** A decoded record and when it ends. */
    private record Stored(IdempotencyRecord record, String clock, long expiry) {
        boolean live() {
            if (expiry == Long.MAX_VALUE) {
                return true;
            }
            if (clock.equals(WALL)) {
                return System.currentTimeMillis() < expiry;
            }
            return clock.equals(BOOT_ID) && System.nanoTime() - expiry < 0;
        }
    }

    /** What a change leaves in the file. */
    private sealed interface Change {}

    private record Keep() implements Change {}

    private record Write(byte[] bytes) implements Change {}

    private record Remove() implements Change {}

    /** A change of one record, decided under its file lock from what the file holds (null: none or not live). */
    @FunctionalInterface
    private interface Decision {
        Change decide(Stored live);
    }

    /**
     * @param engineDirectory the file: engine's directory
     * @param uri the engine's URI, for messages
     */
    FileIdempotencyStore(Path engineDirectory, String uri) {
        this.directory = engineDirectory.resolve(DIRECTORY);
        this.uri = uri;
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw unavailable("could not create the idempotency directory", directory, e);
        }
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        purgeNowAndThen();
        Stored[] existing = new Stored[1];
        change(id, true, live -> {
            if (owned(live, token)) {
                return new Write(encode(live.record(), BOOT_ID, leaseEnd(lease))); // our own claim, sent again
            }
            if (live != null) {
                existing[0] = live;
                return new Keep();
            }
            return new Write(
                    encode(new IdempotencyRecord(false, token, fingerprint, null, false), BOOT_ID, leaseEnd(lease)));
        });
        return Optional.ofNullable(existing[0]).map(Stored::record);
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        boolean[] done = new boolean[1];
        change(id, false, live -> {
            if (!owned(live, token)) {
                return new Keep();
            }
            done[0] = true;
            return new Write(encode(live.record(), BOOT_ID, leaseEnd(lease)));
        });
        return done[0];
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        boolean[] done = new boolean[1];
        change(id, false, live -> {
            if (live != null
                    && live.record().completed()
                    && live.record().token().equals(token)) {
                done[0] = true; // this completion, sent again
                return new Keep();
            }
            if (!owned(live, token)) {
                return new Keep();
            }
            done[0] = true;
            long end =
                    retention == null ? Long.MAX_VALUE : saturatedAdd(System.currentTimeMillis(), retention.toMillis());
            return new Write(encode(
                    new IdempotencyRecord(true, token, live.record().fingerprint(), result, failure), WALL, end));
        });
        return done[0];
    }

    @Override
    public boolean release(String id, String token) {
        boolean[] done = new boolean[1];
        change(id, false, live -> {
            if (!owned(live, token)) {
                return new Keep();
            }
            done[0] = true;
            return new Remove();
        });
        return done[0];
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        Stored[] found = new Stored[1];
        change(id, false, live -> {
            found[0] = live;
            return new Keep();
        });
        return Optional.ofNullable(found[0]).map(Stored::record);
    }

    private static boolean owned(Stored live, String token) {
        return live != null
                && !live.record().completed()
                && live.record().token().equals(token);
    }

    private static long leaseEnd(Duration lease) {
        long nanos = lease.toNanos();
        return BOOT_ID.equals(WALL)
                ? saturatedAdd(System.currentTimeMillis(), lease.toMillis())
                : System.nanoTime() + nanos;
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 || sum == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : sum;
    }

    Path pathOf(String id) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
            return directory.resolve(HexFormat.of().formatHex(digest) + ".rec");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * Runs a decision on the record of this id under its locks, and applies it.
     *
     * @param create whether to create the file when there is none (a claim); else a missing file
     *     is decided as no record
     */
    private void change(String id, boolean create, Decision decision) {
        Path path = pathOf(id);
        ReentrantLock stripe = stripe(path);
        stripe.lock();
        try {
            while (true) {
                if (changeOnce(path, create, decision)) {
                    return;
                }
            }
        } catch (IOException e) {
            throw unavailable("could not read or write an idempotency record", path, e);
        } finally {
            stripe.unlock();
        }
    }

    /** @return false if the file was a tombstone (removed meanwhile): open the path again */
    private boolean changeOnce(Path path, boolean create, Decision decision) throws IOException {
        AsynchronousFileChannel channel;
        try {
            channel = create
                    ? AsynchronousFileChannel.open(
                            path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)
                    : AsynchronousFileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (NoSuchFileException e) {
            decision.decide(null);
            return true;
        }
        try (channel) {
            FileLock lock = FileLockFile.await(channel.lock());
            try {
                byte[] bytes = readAll(channel);
                if (isTombstone(bytes)) {
                    return false;
                }
                Stored stored = decode(bytes, path);
                Change change = decision.decide(stored != null && stored.live() ? stored : null);
                if (change instanceof Write write) {
                    writeAll(channel, write.bytes());
                } else if (change instanceof Remove) {
                    remove(channel, path);
                }
                return true;
            } finally {
                if (channel.isOpen()) {
                    lock.release();
                }
            }
        }
    }

    /** @return this JVM's lock of the record file: one of {@link #STRIPES}, by file name */
    private static ReentrantLock stripe(Path path) {
        return LOCKS[Math.floorMod(path.getFileName().hashCode(), STRIPES)];
    }

    /** @return whether the file was removed under its lock (open the path again) */
    private static boolean isTombstone(byte[] bytes) {
        return bytes.length > MAGIC.length && bytes[MAGIC.length] == TOMBSTONE;
    }

    /** Marks the file as removed and unlinks it; the caller holds its lock. */
    private static void remove(AsynchronousFileChannel channel, Path path) throws IOException {
        byte[] tombstone = new byte[MAGIC.length + 1];
        System.arraycopy(MAGIC, 0, tombstone, 0, MAGIC.length);
        tombstone[MAGIC.length] = TOMBSTONE;
        writeAll(channel, tombstone);
        Files.deleteIfExists(path);
    }

    private static byte[] readAll(AsynchronousFileChannel channel) throws IOException {
        long size = channel.size();
        if (size > Integer.MAX_VALUE - 16) {
            throw new IOException("an idempotency record of " + size + " bytes is too large");
        }
        ByteBuffer buffer = ByteBuffer.allocate((int) size);
        while (buffer.hasRemaining()) {
            int read = FileLockFile.await(channel.read(buffer, buffer.position()));
            if (read < 0) {
                break;
            }
        }
        byte[] bytes = new byte[buffer.position()];
        buffer.flip().get(bytes);
        return bytes;
    }

    private static void writeAll(AsynchronousFileChannel channel, byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            FileLockFile.await(channel.write(buffer, buffer.position()));
        }
        channel.truncate(bytes.length);
    }

    static byte[] encode(IdempotencyRecord record, String clock, long expiry) {
        ByteArrayOutputStream bytes =
                new ByteArrayOutputStream(128 + (record.result() == null ? 0 : record.result().length));
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeByte(record.completed() ? COMPLETED : IN_PROGRESS);
            out.writeBoolean(record.failure());
            out.writeUTF(clock);
            out.writeLong(expiry);
            out.writeUTF(record.token());
            out.writeUTF(record.fingerprint());
            byte[] result = record.result() == null ? new byte[0] : record.result();
            out.writeInt(record.result() == null ? -1 : result.length);
            out.write(result);
            CRC32 crc = new CRC32();
            crc.update(bytes.toByteArray());
            out.writeInt((int) crc.getValue());
        } catch (IOException e) {
            throw new IllegalStateException("writing to memory failed", e);
        }
        return bytes.toByteArray();
    }

    /** @return the record, or null if the file is empty or torn */
    private static Stored decode(byte[] bytes, Path path) {
        if (bytes.length == 0) {
            return null;
        }
        try {
            if (bytes.length < MAGIC.length + 4
                    || !java.util.Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
                throw new IOException("not an idempotency record of format 1");
            }
            CRC32 crc = new CRC32();
            crc.update(bytes, 0, bytes.length - 4);
            if (ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt() != (int) crc.getValue()) {
                throw new IOException("checksum mismatch");
            }
            DataInputStream in =
                    new DataInputStream(new ByteArrayInputStream(bytes, MAGIC.length, bytes.length - MAGIC.length - 4));
            byte state = in.readByte();
            boolean failure = in.readBoolean();
            String clock = in.readUTF();
            long expiry = in.readLong();
            String token = in.readUTF();
            String fingerprint = in.readUTF();
            int length = in.readInt();
            byte[] result = length < 0 ? null : in.readNBytes(length);
            if (result != null && result.length != length || in.available() != 0) {
                throw new IOException("wrong length");
            }
            return new Stored(
                    new IdempotencyRecord(state == COMPLETED, token, fingerprint, result, failure), clock, expiry);
        } catch (IOException | RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "the idempotency record " + path + " is torn or not ours (" + e.getMessage()
                            + "); it counts as free");
            return null;
        }
    }

    /** At most every ten minutes, one claim removes the files of records that are over. */
    private void purgeNowAndThen() {
        long now = System.nanoTime();
        long due = nextPurge;
        if (now - due < 0) {
            return;
        }
        nextPurge = now + PURGE_EVERY_NANOS;
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "*.rec")) {
            for (Path path : files) {
                if (purge(path)) {
                    removed++;
                }
            }
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "could not purge " + directory + ": " + e);
        }
        if (removed > 0) {
            LOG.log(Level.DEBUG, "removed " + removed + " idempotency record(s) that were over from " + directory);
        }
    }

    /** Removes one file if its record is over, without waiting for anyone. */
    private boolean purge(Path path) throws IOException {
        ReentrantLock stripe = stripe(path);
        if (!stripe.tryLock()) {
            return false;
        }
        try (AsynchronousFileChannel channel =
                AsynchronousFileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                return false;
            }
            byte[] bytes = readAll(channel);
            if (isTombstone(bytes)) {
                return false;
            }
            Stored stored = decode(bytes, path);
            if (stored != null && stored.live()) {
                return false;
            }
            remove(channel, path);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } finally {
            stripe.unlock();
        }
    }

    private EngineUnavailableException unavailable(String what, Path path, IOException cause) {
        return new EngineUnavailableException(
                "file: engine " + uri + ": " + what + " (" + path + "): " + cause
                        + "; check that the directory is on a local file system that supports file locks and that this"
                        + " user may read and write its files",
                cause);
    }

    private static String bootId() {
        try {
            String id =
                    Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            return id.isEmpty() ? WALL : id;
        } catch (IOException | RuntimeException e) {
            return WALL;
        }
    }
}
