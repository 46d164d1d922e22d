package io.cerberus.local;

import io.cerberus.EngineUnavailableException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code file:} engine's epoch of a namespace ({@link io.cerberus.spi.KeepsEpochs}): a decimal number in the file
 * {@code part(namespace).epoch} beside the lock files (never a lock file: those end in {@code .lock}), read and raised
 * under an OS lock on it and, since the OS lock belongs to the process, a lock in this JVM. A raise is forced to disk
 * before it returns.
 *
 * @param file the epoch file
 */
@SuppressWarnings("try") // the OS lock is held for the block, not used in it
record FileEpochs(Path file) {
    private static final ReentrantLock IN_THIS_JVM = new ReentrantLock();

    static FileEpochs of(Path directory, String namespace) {
        return new FileEpochs(directory.resolve(FileNames.namespacePrefix(namespace) + "epoch"));
    }

    /**
     * @param atLeast the least epoch wanted; 0 only reads
     * @return the epoch after the call
     * @throws EngineUnavailableException if the file cannot be read or written
     */
    long raise(long atLeast) {
        IN_THIS_JVM.lock();
        try (FileChannel channel = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock ignored = channel.lock()) {
            ByteBuffer read = ByteBuffer.allocate(32);
            while (channel.read(read) > 0 && read.hasRemaining()) {
                // until the end of the file or 32 bytes
            }
            String text = new String(read.array(), 0, read.position(), StandardCharsets.US_ASCII).strip();
            long epoch = text.isEmpty() ? 0 : Long.parseLong(text);
            if (atLeast <= epoch) {
                return epoch;
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(Long.toString(atLeast).getBytes(StandardCharsets.US_ASCII)), 0);
            channel.force(true);
            return atLeast;
        } catch (IOException | NumberFormatException e) {
            throw new EngineUnavailableException(
                    "file: engine could not read or raise its epoch in " + file + ": " + e, e);
        } finally {
            IN_THIS_JVM.unlock();
        }
    }
}
