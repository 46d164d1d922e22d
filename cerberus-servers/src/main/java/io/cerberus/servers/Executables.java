package io.cerberus.servers;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Finds the server programs on this machine: on the PATH, then in the directories Debian puts
 * servers in that are often not on a user's PATH ({@code sbin}, PostgreSQL's versioned
 * {@code bin}). A missing program fails with the Debian package to install.
 */
public final class Executables {
    private static final List<String> EXTRA_DIRS = List.of(
            "/usr/sbin",
            "/sbin",
            "/usr/local/sbin",
            "/usr/local/bin",
            "/usr/lib/postgresql/17/bin",
            "/usr/lib/postgresql/16/bin",
            "/usr/lib/postgresql/15/bin");

    private Executables() {}

    /**
     * @param program a program name such as {@code redis-server}
     * @return its path, if found on the PATH or in the usual server directories
     */
    public static Optional<Path> find(String program) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        for (String dir : EXTRA_DIRS) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * @param program a program name
     * @param debianPackage the Debian package that provides it
     * @return its path
     * @throws ServerException naming the package to install, if the program is missing
     */
    public static Path require(String program, String debianPackage) {
        return find(program)
                .orElseThrow(() -> new ServerException(program + " was not found on the PATH nor in "
                        + String.join(", ", EXTRA_DIRS) + "; install it with: apt-get install -y " + debianPackage
                        + " (for the tests, ./test-all installs every server they need)"));
    }
}
