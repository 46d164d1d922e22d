package io.cerberus.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * No source file of the safety checker ({@code cerberus-check/src/main}) is longer than
 * {@value #MAX_LINES} lines, everything counted as {@code wc -l} counts it: a class that grows past
 * it holds a second idea (parsing the logs, judging, reporting), which gets a class of its own.
 */
class ClassLengthTest {
    static final int MAX_LINES = 450;

    @Test
    void noClassOfTheCheckerIsLongerThanTheLimit() {
        List<Path> sources = Tree.javaSources().stream()
                .filter(file -> Tree.root().relativize(file).startsWith("cerberus-check/src/main"))
                .toList();
        assertThat(sources).as("the checker's sources the rule measures").hasSizeGreaterThan(40);
        assertThat(tooLong(sources))
                .as("classes of cerberus-check over " + MAX_LINES + " lines")
                .isEmpty();
    }

    @Test
    void aClassOverTheLimitFailsTheRule() {
        Path offender = Tree.root()
                .resolve("cerberus-architecture/src/test/java/io/cerberus/architecture/offenders/LongClass.java");
        assertThat(tooLong(List.of(offender)))
                .containsExactly(
                        "cerberus-architecture/src/test/java/io/cerberus/architecture/offenders/LongClass.java: 451 lines");
    }

    /** @return each file, relative to the root, that is too long, with its length */
    static List<String> tooLong(List<Path> files) {
        Path root = Tree.root();
        return files.stream()
                .filter(file -> lines(file) > MAX_LINES)
                .map(file -> root.relativize(file) + ": " + lines(file) + " lines")
                .toList();
    }

    private static long lines(Path file) {
        return Tree.read(file).lines().count();
    }
}
