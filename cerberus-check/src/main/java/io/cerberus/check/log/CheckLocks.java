package io.cerberus.check.log;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The locks of a {@code cerberus check} run and their registers: {@code count} independent locks,
 * each with a fenced register of its own. One lock keeps the plain names ({@code NAME},
 * {@code register}); several are {@code NAME-0} ... and {@code register-0} ..., lock {@code i}
 * protecting register {@code i}. With {@code permits} above 0 each name is a semaphore of that many
 * permits, and each of its slots is a <em>unit</em> with a register of its own, keyed by the slot's
 * fence name ({@code register-NAME#SLOT}); without, a unit is a lock. Events and registers are
 * numbered by unit: semaphore {@code i}'s slot {@code s} is unit {@code i * permits + s}.
 *
 * @param name the lock name ({@code --lock}), or the prefix of the names of several
 * @param register the register file, or the prefix of the files of several
 * @param count how many locks (or semaphores), at least 1
 * @param permits each semaphore's permits, or 0 for locks
 */
public record CheckLocks(String name, Path register, int count, int permits) {

    public CheckLocks {
        if (count < 1) {
            throw new IllegalArgumentException("a check needs at least one lock, was " + count);
        }
        if (permits < 0) {
            throw new IllegalArgumentException("a semaphore has at least one permit, was " + permits);
        }
    }

    /** Locks, not semaphores. */
    public CheckLocks(String name, Path register, int count) {
        this(name, register, count, 0);
    }

    /** @return the name of lock (or semaphore) {@code lock} */
    public String name(int lock) {
        return count == 1 ? name : name + "-" + lock;
    }

    /** @return how many units the run has: its locks, or every slot of its semaphores */
    public int units() {
        return permits == 0 ? count : count * permits;
    }

    /** @return the unit of slot {@code slot} of semaphore {@code lock}; with locks, the lock */
    public int unit(int lock, int slot) {
        return permits == 0 ? lock : lock * permits + slot;
    }

    /** @return the lock or semaphore a unit belongs to */
    public int lockOf(int unit) {
        return permits == 0 ? unit : unit / permits;
    }

    /** @return the name of unit {@code unit}: the lock's, or the slot's fence name ({@code NAME#SLOT}) */
    public String unitName(int unit) {
        return permits == 0 ? name(unit) : name(unit / permits) + "#" + unit % permits;
    }

    /** @return the register file of unit {@code unit} */
    public Path register(int unit) {
        if (permits > 0) {
            return register.resolveSibling(register.getFileName() + "-" + unitName(unit));
        }
        return count == 1 ? register : register.resolveSibling(register.getFileName() + "-" + unit);
    }

    /** @return every lock's (or semaphore's) name, by index */
    public List<String> names() {
        return IntStream.range(0, count).mapToObj(this::name).toList();
    }

    /** @return every unit's name, by unit */
    public List<String> unitNames() {
        return IntStream.range(0, units()).mapToObj(this::unitName).toList();
    }

    /** @return every unit's register name ({@code register}, {@code register-0} ..., {@code register-NAME#0} ...) */
    public List<String> registerNames() {
        return IntStream.range(0, units())
                .mapToObj(unit -> register(unit).getFileName().toString())
                .toList();
    }
}
