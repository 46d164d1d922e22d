package io.cerberus.cli;

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
record CheckLocks(String name, Path register, int count) {

    CheckLocks {
        if (count < 1) {
            throw new IllegalArgumentException("a check needs at least one lock, was " + count);
        }
    }

    /** @return the name of lock {@code lock} */
    String name(int lock) {
        return count == 1 ? name : name + "-" + lock;
    }

    /** @return the register file of lock {@code lock} */
    Path register(int lock) {
        return count == 1 ? register : register.resolveSibling(register.getFileName() + "-" + lock);
    }

    /** @return every lock's name, by index */
    List<String> names() {
        return IntStream.range(0, count).mapToObj(this::name).toList();
    }

    /** @return every lock's register, by index */
    List<FencedRegister> registers(boolean fenced) {
        return IntStream.range(0, count).mapToObj(lock -> new FencedRegister(register(lock), fenced)).toList();
    }
}
