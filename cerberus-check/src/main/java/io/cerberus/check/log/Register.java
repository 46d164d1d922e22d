package io.cerberus.check.log;

import io.cerberus.Fence;
import java.util.Optional;

/**
 * The safety checker's protected resource: a number kept outside the lock engine, with the count of writes it
 * accepted, both changed in one atomic step, so that {@code accepted - value} is the number of updates a stale
 * write undid (lost updates) whatever the faults. Fenced, it refuses a read or a write whose fence is older than
 * the newest it has seen, through one of the fencing helpers users call ({@link Registers}): a file, SQL rows or
 * Redis keys. Unfenced (the negative control), every operation carries the same fence, so the helper checks
 * nothing.
 */
public interface Register {

    /**
     * What the register holds.
     *
     * @param value the number
     * @param accepted the writes it accepted
     */
    record State(long value, long accepted) {
        /** The state of a register never written. */
        public static final State EMPTY = new State(0, 0);

        /** @return the form the file and Redis registers store: {@code VALUE ACCEPTED} */
        String text() {
            return value + " " + accepted;
        }

        static State parse(String text) {
            int space = text.indexOf(' ');
            return new State(Long.parseLong(text.substring(0, space)), Long.parseLong(text.substring(space + 1)));
        }
    }

    /**
     * @return the register's state now, read as an observer: records no fence
     * @throws RuntimeException if its store cannot be reached
     */
    State read();

    /**
     * Reads as a holder: a fenced register also records the reader's fence, so that a holder with an older one
     * cannot write after a newer holder has read (its write would undo the newer holder's update).
     *
     * @param fence the reader's fence
     * @return the state, or empty if the register has seen a newer fence (nothing read)
     * @throws RuntimeException if its store cannot be reached (the outcome is unknown)
     */
    Optional<State> read(Fence fence);

    /**
     * Writes a value and counts the write, unless the register is fenced and has seen a newer fence.
     *
     * @param value the new value
     * @param fence the writer's fence
     * @return true if written, false if refused as stale
     * @throws RuntimeException if its store cannot be reached (the outcome is unknown)
     */
    boolean write(long value, Fence fence);
}
