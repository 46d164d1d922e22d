package io.cerberus.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps a docs page's examples compiling: each Java block of one section of the page must appear,
 * line by line (indentation and blank lines aside), in a source file that the build compiles. A
 * block that drifted from the code, or a section with no Java block, fails by name.
 */
public final class DocExamples {
    private DocExamples() {}

    /**
     * @param page the page, relative to the repository root (e.g. {@code docs/MIGRATION.md})
     * @param heading the section's heading line, exactly (e.g. {@code ## From ShedLock})
     * @param source the compiled source, relative to the repository root
     * @return how many blocks were found in the source
     * @throws AssertionError naming the first block line the source lacks
     */
    public static int assertEveryJavaBlockIn(String page, String heading, String source) {
        Path root = ReadmeExamples.readme()
                .orElseThrow(() -> new AssertionError(
                        "no repository root above " + Path.of("").toAbsolutePath()))
                .getParent();
        List<List<String>> blocks = javaBlocks(read(root.resolve(page)), heading);
        if (blocks.isEmpty()) {
            throw new AssertionError(page + ", section '" + heading + "': no Java block");
        }
        List<String> code = significant(read(root.resolve(source)).lines().toList());
        for (List<String> block : blocks) {
            if (indexOf(code, block) < 0) {
                String missing = block.stream()
                        .filter(line -> !code.contains(line))
                        .findFirst()
                        .orElse(block.get(0) + " (its lines are there, not in this order)");
                throw new AssertionError(
                        page + ", section '" + heading + "': a Java block is not in " + source + ": " + missing);
            }
        }
        return blocks.size();
    }

    static List<List<String>> javaBlocks(String page, String heading) {
        List<List<String>> blocks = new ArrayList<>();
        boolean inSection = false;
        List<String> block = null;
        for (String line : page.lines().toList()) {
            if (block != null) {
                if (line.strip().equals("```")) {
                    blocks.add(significant(block));
                    block = null;
                } else {
                    block.add(line);
                }
            } else if (line.startsWith("#")) {
                inSection = line.strip().equals(heading) || (inSection && headingLevel(line) > headingLevel(heading));
            } else if (inSection && line.strip().equals("```java")) {
                block = new ArrayList<>();
            }
        }
        return blocks;
    }

    private static int headingLevel(String line) {
        int level = 0;
        while (level < line.length() && line.charAt(level) == '#') {
            level++;
        }
        return level;
    }

    private static List<String> significant(List<String> lines) {
        return lines.stream().map(String::strip).filter(line -> !line.isEmpty()).toList();
    }

    private static int indexOf(List<String> code, List<String> block) {
        for (int start = 0; start + block.size() <= code.size(); start++) {
            if (code.subList(start, start + block.size()).equals(block)) {
                return start;
            }
        }
        return -1;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
