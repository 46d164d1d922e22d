package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.JavaSources;
import io.cerberus.testkit.ReadmeExamples;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Java examples of the "SQL rows" section of docs/FENCING.md compile as a reader copies them: each
 * block goes into a frame that imports what an application imports and declares the names the page
 * leaves to the reader ({@code cerberus}, {@code dataSource}, {@code accounts}, {@code id},
 * {@code amount}). A block of declarations is the frame's body; any other is the body of a method.
 */
class FencingDocsExamplesTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

    @Test
    void everyJavaExampleOfTheSqlRowsSectionCompiles() throws Exception {
        String page = Files.readString(ReadmeExamples.readme().orElseThrow().resolveSibling("docs/FENCING.md"));
        int start = page.indexOf("\n## SQL rows\n");
        assertThat(start).as("the SQL rows section").isPositive();
        int end = page.indexOf("\n## ", start + 1);
        List<String> blocks = new ArrayList<>();
        Matcher block = JAVA_BLOCK.matcher(end < 0 ? page.substring(start) : page.substring(start, end));
        while (block.find()) {
            blocks.add(block.group(1));
        }
        assertThat(blocks).as("Java examples of the SQL rows section").hasSize(2);
        for (int i = 0; i < blocks.size(); i++) {
            String name = "FencingExample" + i;
            JavaSources.compile(
                    "docs." + name, frame(name, blocks.get(i)), "example " + (i + 1) + " of docs/FENCING.md");
        }
    }

    private static String frame(String name, String block) {
        String body = block.strip().startsWith("@") ? block : "void example() throws Exception {\n" + block + "\n}";
        return """
                package docs;

                import io.cerberus.Cerberus;
                import io.cerberus.Fence;
                import io.cerberus.Lease;
                import io.cerberus.fencing.FencedRows;
                import io.cerberus.fencing.StaleFenceException;
                import io.cerberus.spring.FencedRowsTemplate;
                import java.sql.Connection;
                import java.time.Duration;
                import javax.sql.DataSource;
                import org.springframework.context.annotation.Bean;
                import org.springframework.transaction.annotation.Transactional;

                class %s {
                    Cerberus cerberus;
                    DataSource dataSource;
                    FencedRowsTemplate accounts;
                    String id;
                    long amount;

                %s
                }
                """.formatted(name, body);
    }
}
