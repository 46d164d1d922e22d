package io.cerberus.testkit;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.io.TempDir;

/** The {@code file:} engine passes the conformance suite. */
class FileConformanceTest extends AbstractLockEngineConformanceTest {
    @TempDir
    static Path dir;

    @Override
    protected String engineUri() {
        return "file:" + dir.resolve("locks");
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("file:/proc/cerberus-unwritable");
    }
}
