package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The directories of servers and server groups: made on start, temporary ones deleted on close. */
final class Directories {
    private Directories() {}

    /**
     * @param dir a directory, made with its parents if missing
     * @return {@code dir}
     * @throws ServerException if it cannot be made
     */
    static Path create(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new ServerException("could not create the directory " + dir + ": " + e, e);
        }
    }

    /**
     * @param parent where to make it: {@code /dev/shm} for files a server fsyncs often, or null for
     *     the system's temporary directory
     * @param prefix the start of its name
     * @return a new empty directory
     * @throws ServerException if it cannot be made
     */
    static Path createTemp(Path parent, String prefix) {
        try {
            return parent == null ? Files.createTempDirectory(prefix) : Files.createTempDirectory(parent, prefix);
        } catch (IOException e) {
            throw new ServerException(
                    "could not create a temporary directory in "
                            + (parent == null ? System.getProperty("java.io.tmpdir") : parent) + ": " + e,
                    e);
        }
    }

    /** @return {@code /dev/shm} where it is a writable directory (memory: an fsync there takes no time), else null */
    static Path memory() {
        Path memory = Path.of("/dev/shm");
        return Files.isDirectory(memory) && Files.isWritable(memory) ? memory : null;
    }

    /** Deletes a directory and everything in it; what cannot be deleted stays (the OS cleans temporary files up). */
    static void deleteQuietly(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // left for the OS's temporary-file cleaning
        }
    }

    /**
     * @param file a file to write, its directory made if missing
     * @param text its whole text
     * @throws ServerException if it cannot be written
     */
    static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new ServerException("could not write " + file + ": " + e, e);
        }
    }
}
