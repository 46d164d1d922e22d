package io.cerberus.check.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The safety checker's protected resource: a number in a file, outside the lock engine, that
 * refuses a write carrying a fencing token lower than the highest it has seen, on a read or a write. Each operation
 * is atomic (an OS file lock around read-modify-write), so lost updates can only come from the
 * clients' read-then-write, which is what the lock under test must protect.
 *
 * <p>Layout: four longs: the value, the highest token accepted, the writes accepted, the stale
 * writes refused.
 */
public final class FencedRegister {
    private static final int SIZE = 4 * Long.BYTES;

    /** What the register holds. */
    public record State(long value, long highestToken, long accepted, long staleRefused) {}

    private final Path file;
    private final boolean fenced;

    /**
     * @param file the register's file
     * @param fenced whether writes with a lower token are refused; false is the negative control
     */
    public FencedRegister(Path file, boolean fenced) {
        this.file = file;
        this.fenced = fenced;
    }

    /** Creates the register at value 0. */
    public static FencedRegister create(Path file, boolean fenced) {
        FencedRegister register = new FencedRegister(file, fenced);
        register.update(state -> new State(0, Long.MIN_VALUE, 0, 0));
        return register;
    }

    /** @return the register's state now */
    public State read() {
        State[] seen = new State[1];
        update(state -> {
            seen[0] = state;
            return state;
        });
        return seen[0];
    }

    /**
     * Reads as a holder: a fenced register also remembers the reader's token, so a holder with an
     * older token cannot write after a newer holder has read (its write would undo the newer
     * holder's update).
     *
     * @param token the reader's fencing token
     * @return the register's state before this read
     */
    public State read(long token) {
        State[] seen = new State[1];
        update(state -> {
            seen[0] = state;
            return fenced && token > state.highestToken()
                    ? new State(state.value(), token, state.accepted(), state.staleRefused())
                    : state;
        });
        return seen[0];
    }

    /**
     * Writes a value, unless the register is fenced and has seen a higher token.
     *
     * @param value the new value
     * @param token the writer's fencing token
     * @return true if written, false if refused as stale
     */
    public boolean write(long value, long token) {
        boolean[] written = new boolean[1];
        update(state -> {
            if (fenced && token < state.highestToken()) {
                return new State(state.value(), state.highestToken(), state.accepted(), state.staleRefused() + 1);
            }
            written[0] = true;
            return new State(value, Math.max(token, state.highestToken()), state.accepted() + 1, state.staleRefused());
        });
        return written[0];
    }

    /** Synchronized: OS file locks are held by the process, so two loops of one client must take turns here first. */
    private synchronized void update(java.util.function.UnaryOperator<State> change) {
        try (FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock lock = channel.lock();
            try {
                change(channel, change);
            } finally {
                lock.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot update the register " + file, e);
        }
    }

    private static void change(FileChannel channel, java.util.function.UnaryOperator<State> change) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(SIZE);
        State before;
        if (channel.size() < SIZE) {
            before = new State(0, Long.MIN_VALUE, 0, 0);
        } else {
            channel.read(buffer, 0);
            buffer.flip();
            before = new State(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong());
        }
        State after = change.apply(before);
        if (!after.equals(before)) {
            buffer.clear();
            buffer.putLong(after.value())
                    .putLong(after.highestToken())
                    .putLong(after.accepted())
                    .putLong(after.staleRefused())
                    .flip();
            channel.write(buffer, 0);
        }
    }
}
