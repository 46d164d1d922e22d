package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.ReadmeExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The quick start of SPRING.md is, file for file and character for character, the application in
 * {@code consumer-checks/spring-boot-quick-start/}, which the build compiles and tests against the
 * starter just built: what a reader copies builds and runs. Every file of that application but its
 * test is on the page.
 */
class QuickStartDocTest {
    private static final String PROJECT = "consumer-checks/spring-boot-quick-start";
    /** A fenced block of the page. */
    private static final Pattern BLOCK =
            Pattern.compile("^```[a-z]+\\n(.*?)\\n```", Pattern.MULTILINE | Pattern.DOTALL);
    /** The path, in backquotes, that opens the paragraph before a block. */
    private static final Pattern PATH = Pattern.compile("^`(pom\\.xml|src/[^`]+)`", Pattern.MULTILINE);

    @Test
    void theQuickStartIsTheCheckedApplicationVerbatim() throws IOException {
        Path tree = ReadmeExamples.readme().orElseThrow().getParent();
        String page = Files.readString(tree.resolve("docs/SPRING.md"));
        String section = page.substring(page.indexOf("## Quick start"), page.indexOf("## Properties"));

        Map<String, String> shown = new TreeMap<>();
        Matcher block = BLOCK.matcher(section);
        int previousEnd = 0;
        while (block.find()) {
            Matcher path = PATH.matcher(section.substring(previousEnd, block.start()));
            assertThat(path.find())
                    .as("a file's path before the block at " + block.start())
                    .isTrue();
            shown.put(path.group(1), block.group(1));
            previousEnd = block.end();
        }
        Path project = tree.resolve(PROJECT);
        Map<String, String> checked = new TreeMap<>();
        try (Stream<Path> files = Files.walk(project)) {
            for (Path path : files.filter(Files::isRegularFile).toList()) {
                String relative = project.relativize(path).toString().replace('\\', '/');
                if (relative.startsWith("target/") || relative.startsWith("src/test/")) {
                    continue;
                }
                checked.put(relative, Files.readString(path).stripTrailing());
            }
        }
        assertThat(checked).as("the files of " + PROJECT).containsKeys("pom.xml", "src/main/resources/application.yml");
        assertThat(shown).as("the quick start of SPRING.md, file by file").isEqualTo(checked);
    }
}
