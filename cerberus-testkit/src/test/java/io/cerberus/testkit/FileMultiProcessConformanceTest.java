package io.cerberus.testkit;

import io.cerberus.Capability;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;

/** The {@code file:} engine passes the multi-process conformance suite. */
class FileMultiProcessConformanceTest extends AbstractMultiProcessConformanceTest {
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
}
