package io.cerberus.check.log;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The locks of a {@code cerberus check} run and their registers: {@code count} independent locks,
 * each with a fenced register of its own. One lock keeps the plain names ({@code NAME},
 * {@code register}); several are {@code NAME-0} ... and {@code register-0} ..., lock {@code i}
 * protecting register {@code i}.
 *
 * @param name the lock name ({@code --lock}), or the prefix of the names of several
 * @param register the register file, or the prefix of the files of several
 * @param count how many locks, at least 1
 */
public record CheckLocks(String name, Path register, int count) {

    public CheckLocks {
        if (count < 1) {
            throw new IllegalArgumentException("a check needs at least one lock, was " + count);
        }
    }

    /** @return the name of lock {@code lock} */
    public String name(int lock) {
        return count == 1 ? name : name + "-" + lock;
    }

    /** @return the register file of lock {@code lock} */
    public Path register(int lock) {
        return count == 1 ? register : register.resolveSibling(register.getFileName() + "-" + lock);
    }

    /** @return every lock's name, by index */
    public List<String> names() {
        return IntStream.range(0, count).mapToObj(this::name).toList();
    }

    /** @return every lock's register name ({@code register}, or {@code register-0} ...), by index */
    public List<String> registerNames() {
        return IntStream.range(0, count)
                .mapToObj(lock -> register(lock).getFileName().toString())
                .toList();
    }
}
