package io.cerberus.testkit;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The {@code file:} engine passes the multi-process conformance suite. */
class FileMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
    @TempDir
    static Path dir;

    @Override
    protected String engineUri() {
        return "file:" + dir.resolve("locks");
    }
}
