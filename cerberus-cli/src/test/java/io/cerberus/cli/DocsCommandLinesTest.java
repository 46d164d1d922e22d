package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.cerberus.testkit.ReadmeExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@code cerberus} command line shown in the README and the user pages (in a code block, with
 * or without a {@code $ } prompt or {@code ./}) is one the command accepts: its subcommand and
 * options exist and their values convert. Synopsis lines (with {@code [optional]} parts) and lines
 * of output are not examples and are skipped.
 */
class DocsCommandLinesTest {
    private static final Pattern BLOCK = Pattern.compile("```[a-z]*\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern COMMAND = Pattern.compile("^(?:\\$ )?(?:\\./)?cerberus ([a-z]+(?: .*)?)$");

    @Test
    void everyCommandLineInTheDocsIsAccepted() throws IOException {
        List<String> commands = new ArrayList<>();
        for (Path page : pages()) {
            for (String line : commandLines(Files.readString(page))) {
                commands.add(line);
                List<String> words = words(line);
                assertThatCode(() -> CerberusCommand.commandLine().parseArgs(words.toArray(String[]::new)))
                        .as("'cerberus %s' in %s", line, page.getFileName())
                        .doesNotThrowAnyException();
            }
        }
        assertThat(commands)
                .as("the pages show the commands")
                .anyMatch(line -> line.startsWith("unlock "))
                .anyMatch(line -> line.startsWith("check "))
                .anyMatch(line -> line.startsWith("exec "));
    }

    private static List<Path> pages() throws IOException {
        Path readme = ReadmeExamples.readme().orElseThrow();
        try (Stream<Path> docs = Files.list(readme.resolveSibling("docs"))) {
            return Stream.concat(
                            Stream.of(readme),
                            docs.filter(page -> page.toString().endsWith(".md")))
                    .sorted()
                    .toList();
        }
    }

    private static List<String> commandLines(String page) {
        List<String> lines = new ArrayList<>();
        Matcher block = BLOCK.matcher(page);
        while (block.find()) {
            for (String line : block.group(1).split("\n")) {
                Matcher command = COMMAND.matcher(stripComment(line).strip());
                if (command.matches()
                        && !command.group(1).contains("[")
                        && !command.group(1).contains("...")) {
                    lines.add(command.group(1));
                }
            }
        }
        return lines;
    }

    private static String stripComment(String line) {
        int comment = line.indexOf("  #");
        return comment < 0 ? line : line.substring(0, comment);
    }

    /** Splits a shell line at spaces, keeping quoted words whole (no other shell syntax is used). */
    private static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        Matcher word = Pattern.compile("'([^']*)'|\"([^\"]*)\"|(\\S+)").matcher(line);
        while (word.find()) {
            words.add(word.group(1) != null ? word.group(1) : word.group(2) != null ? word.group(2) : word.group(3));
        }
        return words;
    }
}
