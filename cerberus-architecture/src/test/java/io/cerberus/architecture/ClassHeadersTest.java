package io.cerberus.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A class header (the javadoc comment before a file's top-level type) is at most
 * {@value #MAX_HEADER_LINES} lines, its opening and closing lines included: the contract and the
 * invariants fit on a screen; history belongs in commits. Checked on every Java source of the tree,
 * main and test.
 */
class ClassHeadersTest {
    static final int MAX_HEADER_LINES = 25;
    /** The declaration of a top-level type: at the start of a line, after its modifiers. */
    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
            "^(?:(?:public|protected|abstract|final|sealed|non-sealed|strictfp)\\s+)*(?:class|interface|enum|record|@interface)\\s",
            Pattern.MULTILINE);
    /** What may stand between a header and its type: annotations. */
    private static final Pattern ANNOTATIONS = Pattern.compile("(?:\\s*@[\\w.]+(?:\\([^)]*\\))?)*\\s*");

    @Test
    void noClassHeaderIsLongerThanAScreen() {
        List<Path> sources = Tree.javaSources();
        assertThat(sources.stream()
                        .filter(file -> headerLines(Tree.read(file)).isPresent())
                        .count())
                .as("files whose header the rule measures")
                .isGreaterThan(300);
        assertThat(tooLong(sources))
                .as("class headers over " + MAX_HEADER_LINES + " lines")
                .isEmpty();
    }

    @Test
    void aHeaderOverAScreenFailsTheRule() {
        Path offender = Tree.root()
                .resolve("cerberus-architecture/src/test/java/io/cerberus/architecture/offenders/LongHeader.java");
        assertThat(tooLong(List.of(offender)))
                .containsExactly(
                        "cerberus-architecture/src/test/java/io/cerberus/architecture/offenders/LongHeader.java: 26 lines");
    }

    @Test
    void aHeaderIsCountedFromItsOpeningToItsClosingLineAcrossAnnotations() {
        String source =
                "package p;\n\nimport java.util.List;\n\n/**\n * One.\n * Two.\n */\n@Deprecated\n@SuppressWarnings(\"x\")\n"
                        + "public final class A {\n    /** Not a header. */\n    class B {\n    }\n}\n";
        assertThat(headerLines(source)).hasValue(4);
        assertThat(headerLines("package p;\n\n/** A licence. */\nimport java.util.List;\n\nclass A {\n}\n"))
                .isEmpty();
    }

    /** @return each file, relative to the root, whose header is too long, with its length */
    static List<String> tooLong(List<Path> files) {
        Path root = Tree.root();
        return files.stream()
                .filter(file -> headerLines(Tree.read(file)).orElse(0) > MAX_HEADER_LINES)
                .map(file -> root.relativize(file) + ": "
                        + headerLines(Tree.read(file)).getAsInt() + " lines")
                .toList();
    }

    /** @return the lines of the header of the source's top-level type, if it has one */
    static OptionalInt headerLines(String source) {
        Matcher type = TOP_LEVEL_TYPE.matcher(source);
        if (!type.find()) {
            return OptionalInt.empty();
        }
        String before = source.substring(0, type.start());
        int end = before.lastIndexOf("*/");
        int start = end < 0 ? -1 : before.lastIndexOf("/**", end);
        if (start < 0 || !ANNOTATIONS.matcher(before.substring(end + 2)).matches()) {
            return OptionalInt.empty();
        }
        return OptionalInt.of((int) before.substring(start, end).lines().count());
    }
}
