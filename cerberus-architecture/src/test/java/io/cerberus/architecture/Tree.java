package io.cerberus.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The repository's files, for the rules that read sources and POMs. Build output ({@code target})
 * and the rules' own offenders (any {@code offenders} directory) are left out.
 */
final class Tree {
    private Tree() {}

    /** @return the repository root: the directory above this module */
    static Path root() {
        Path root = Path.of("").toAbsolutePath().getParent();
        assertThat(root.resolve("cerberus-architecture"))
                .as("the repository root above this module")
                .isDirectory();
        return root;
    }

    /** @return every file of the tree whose name ends so, but build output and offenders, sorted */
    static List<Path> files(String suffix) {
        Path root = root();
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.getFileName().toString().endsWith(suffix))
                    .filter(file -> isSource(root.relativize(file)))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the Java source files of the tree, main and test */
    static List<Path> javaSources() {
        return files(".java").stream()
                .filter(file -> file.toString().contains("/src/"))
                .toList();
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean isSource(Path relative) {
        for (Path part : relative) {
            String name = part.toString();
            if (name.equals("target") || name.equals("offenders") || name.startsWith(".")) {
                return false;
            }
        }
        return true;
    }
}
