package io.cerberus.fencing;

import io.cerberus.Fence;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A file that takes a write, a delete or a read only under a {@link Fence} no older than the newest
 * it has seen, so that a holder whose lock has passed to another cannot undo the newer holder's work.
 * A read records the reader's fence too: otherwise an older holder that read before a newer one
 * could still write after it (a lost update).
 *
 * <p><b>Layout.</b> The data is the file itself, whole and readable by anything; the newest fence is
 * in a file beside it, {@code NAME.fence} ({@code EPOCH:TOKEN}), which stays after a delete so that
 * an older holder cannot create the file again. Every operation holds an OS lock on the fence file
 * (and a lock in this JVM), so processes and threads take turns. The fence is written and forced to
 * disk before the data; the data is written to a temporary file beside it, forced, and moved over
 * the file at once, so a reader never sees half a write and a crash leaves the old data or the new.
 */
public final class FencedFile {
    private static final ReentrantLock[] STRIPES = new ReentrantLock[64];

    static {
        for (int i = 0; i < STRIPES.length; i++) {
            STRIPES[i] = new ReentrantLock();
        }
    }

    private final Path file;
    private final Path fenceFile;

    /** @param file the protected file; its directory must exist */
    public FencedFile(Path file) {
        if (file == null || file.getFileName() == null) {
            throw new IllegalArgumentException("a fenced file needs a file path, was " + file);
        }
        this.file = file.toAbsolutePath().normalize();
        this.fenceFile = this.file.resolveSibling(this.file.getFileName() + ".fence");
    }

    /** @return the protected file */
    public Path file() {
        return file;
    }

    /**
     * Replaces the file's content.
     *
     * @param fence the writer's fence
     * @param content the new content
     * @throws StaleFenceException if the file has seen a newer fence; the file is unchanged
     * @throws UncheckedIOException if the file cannot be written
     */
    public void write(Fence fence, byte[] content) {
        underFence(fence, () -> {
            Path temporary = Files.createTempFile(file.getParent(), file.getFileName() + ".", ".tmp");
            try {
                try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
                    ByteBuffer data = ByteBuffer.wrap(content);
                    while (data.hasRemaining()) {
                        out.write(data);
                    }
                    out.force(true);
                }
                move(temporary);
            } finally {
                Files.deleteIfExists(temporary);
            }
            return null;
        });
    }

    /**
     * Reads the file as a holder: records the reader's fence, so that no older holder writes after it.
     *
     * @param fence the reader's fence
     * @return the content, or empty when the file does not exist
     * @throws StaleFenceException if the file has seen a newer fence
     * @throws UncheckedIOException if the file cannot be read
     */
    public Optional<byte[]> read(Fence fence) {
        return underFence(fence, () -> {
            try {
                return Optional.of(Files.readAllBytes(file));
            } catch (NoSuchFileException e) {
                return Optional.empty();
            }
        });
    }

    /**
     * Deletes the file; its fence stays, so an older holder cannot create it again.
     *
     * @param fence the deleter's fence
     * @return whether there was a file to delete
     * @throws StaleFenceException if the file has seen a newer fence; the file is unchanged
     */
    public boolean delete(Fence fence) {
        return underFence(fence, () -> Files.deleteIfExists(file));
    }

    /** @return the newest fence the file has seen, empty if none */
    public Optional<Fence> newest() {
        return underLock(channel -> stored(channel));
    }

    private interface Step<T> {
        T run() throws IOException;
    }

    private interface LockedStep<T> {
        T run(FileChannel fence) throws IOException;
    }

    private <T> T underFence(Fence fence, Step<T> step) {
        if (fence == null) {
            throw new IllegalArgumentException("a fenced operation needs a fence (Fence.of(lease)), was null");
        }
        return underLock(channel -> {
            Optional<Fence> newest = stored(channel);
            if (newest.isPresent() && fence.isOlderThan(newest.get())) {
                throw new StaleFenceException("file " + file, fence, newest.get());
            }
            if (newest.isEmpty() || !newest.get().equals(fence)) {
                store(channel, fence);
            }
            return step.run();
        });
    }

    private <T> T underLock(LockedStep<T> step) {
        ReentrantLock local = STRIPES[Math.floorMod(file.hashCode(), STRIPES.length)];
        local.lock();
        try (FileChannel channel = FileChannel.open(
                fenceFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock lock = channel.lock();
            try {
                return step.run(channel);
            } finally {
                lock.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("fenced file " + file + ": " + e.getMessage(), e);
        } finally {
            local.unlock();
        }
    }

    private Optional<Fence> stored(FileChannel channel) throws IOException {
        if (channel.size() == 0) {
            return Optional.empty();
        }
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(channel.size(), 64));
        channel.read(buffer, 0);
        String text = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).strip();
        try {
            return Optional.of(Fence.parse(text));
        } catch (IllegalArgumentException e) {
            throw new IOException("its fence file " + fenceFile + " is damaged (" + e.getMessage() + ")", e);
        }
    }

    /** One write of a fixed width over the last, never a truncation: a crash leaves one fence or the other. */
    private static void store(FileChannel channel, Fence fence) throws IOException {
        String record = String.format("%019d:%019d%n", fence.epoch(), fence.token());
        channel.write(ByteBuffer.wrap(record.getBytes(StandardCharsets.US_ASCII)), 0);
        channel.force(true);
    }

    private void move(Path temporary) throws IOException {
        try {
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
