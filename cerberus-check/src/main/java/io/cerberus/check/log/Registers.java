package io.cerberus.check.log;

import io.cerberus.Fence;
import java.nio.file.Path;
import java.util.List;

/**
 * The registers of a run, one per lock, in the store {@code cerberus check --register} names: files ({@code file},
 * the default, kept by {@code FencedFile}), rows of a SQL database ({@code sql}, by {@code FencedRows}) or Redis keys
 * ({@code redis}, by {@code FencedRedis}). The checker resets them before the clients start; each client opens its
 * own. Closing releases the store's connections.
 */
public interface Registers extends AutoCloseable {

    /** The stores {@code --register} takes. */
    List<String> STORES = List.of("file", "sql", "redis");

    /** The fence every operation of an unfenced register (the negative control) carries: the helper checks nothing. */
    Fence UNFENCED = new Fence(0, 0);

    /**
     * @param storeUri where the registers are: {@code null} for files, a {@code jdbc:} URL, or a {@code redis://} URI
     * @param locks the run's locks, whose registers these are
     * @param fenced false for the negative control
     * @return the registers, not reset
     * @throws IllegalArgumentException if the URI is none of those
     */
    static Registers open(String storeUri, CheckLocks locks, boolean fenced) {
        if (storeUri == null) {
            return new FileRegisters(locks, fenced);
        }
        List<String> names = locks.registerNames();
        if (storeUri.startsWith("jdbc:")) {
            return new SqlRegisters(storeUri, names, fenced);
        }
        if (storeUri.startsWith("redis://")) {
            return new RedisRegisters(storeUri, names, fenced);
        }
        throw new IllegalArgumentException("a register store is a jdbc: URL or a redis:// URI, was " + storeUri);
    }

    /** @return the registers, by lock index */
    List<Register> registers();

    /** Creates each register at value 0 with no fence, replacing what an earlier run left. */
    void reset();

    @Override
    void close();

    /** The register's store failed: the outcome of the operation is unknown. */
    final class Unreachable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The registers in files, one per unit (lock or slot): {@link CheckLocks#register(int)}. */
    final class FileRegisters implements Registers {
        private final List<FileRegister> registers;

        FileRegisters(CheckLocks locks, boolean fenced) {
            this.registers = java.util.stream.IntStream.range(0, locks.units())
                    .mapToObj(lock -> new FileRegister(locks.register(lock), fenced ? null : UNFENCED))
                    .toList();
        }

        @Override
        public List<Register> registers() {
            return List.copyOf(registers);
        }

        @Override
        public void reset() {
            registers.forEach(FileRegister::reset);
        }

        @Override
        public void close() {
            // files: nothing held open
        }
    }

    /** @return a file register at {@code file}, for reading what a run left */
    static Register file(Path file) {
        return new FileRegister(file, null);
    }
}
