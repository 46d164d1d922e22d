package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The annotations over the {@code file:} engine, in a directory of this test's own. */
@SpringBootTest(classes = AnnotatedServices.class)
@DirtiesContext
class FileEngineAnnotationTest extends AbstractAnnotationTest {
    private static final Path DIRECTORY = newDirectory();

    private static Path newDirectory() {
        try {
            return Files.createTempDirectory("cerberus-starter-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void engine(DynamicPropertyRegistry registry) {
        registry.add("cerberus.engines", () -> "file:" + DIRECTORY);
    }

    @AfterAll
    static void removeDirectory() throws IOException {
        try (Stream<Path> files = Files.walk(DIRECTORY)) {
            files.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void theEngineIsTheConfiguredDirectory() {
        assertThat(cerberus.engines()).containsExactly("file");
        assertThat(cerberus.currentEngineUri()).isEqualTo("file:" + DIRECTORY);
    }
}
