package io.cerberus.testkit;

import io.cerberus.Capability;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
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
    protected Set<Capability> expectedCapabilities() {
        return EnumSet.of(
                Capability.FENCING,
                Capability.READ_WRITE,
                Capability.SESSION_BOUND,
                Capability.MULTI_PROCESS,
                Capability.INSPECT);
    }

    @Override
    protected Optional<String> unreachableUri() {
        return Optional.of("file:/proc/cerberus-unwritable");
    }
}
