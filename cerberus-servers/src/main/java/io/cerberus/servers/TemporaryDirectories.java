package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The data directories of servers that keep data on disk, when the caller gave none: made here, deleted on close. */
final class TemporaryDirectories {

    private TemporaryDirectories() {
    }

    /**
     * @param prefix the start of the directory's name, e.g. {@code cerberus-zk-}
     * @return a new empty directory under the system's temporary directory
     * @throws ServerException if it cannot be made
     */
    static Path create(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new ServerException("could not make a temporary directory " + prefix + "* under "
                    + System.getProperty("java.io.tmpdir") + ": " + e, e);
        }
    }

    /**
     * Deletes a directory and everything in it; what cannot be deleted stays (the OS cleans up its temporary directory).
     *
     * @param dir the directory
     */
    static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // already gone, or unreadable: nothing more to do
        }
    }

    /**
     * @param dir a directory that must exist, with its parents
     * @return {@code dir}
     * @throws ServerException if it cannot be made
     */
    static Path directory(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new ServerException("could not make the directory " + dir + ": " + e, e);
        }
    }

    /**
     * @param file a file to write
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
