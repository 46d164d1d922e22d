package io.cerberus.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.spi.LockKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileNamesTest {
    private static final List<String> ODD_NAMES = List.of(
            "x",
            "X",
            "a/b",
            "A/B",
            "a_b",
            "a%2Fb",
            "a%2fb",
            "a.b",
            "a..b",
            "../x",
            "../../etc/passwd",
            "/etc/passwd",
            "a\\b",
            ".",
            "..",
            "...",
            "~",
            "a~b",
            "-",
            "con",
            "a b",
            "*",
            "?",
            "ключ",
            "錠",
            "😀",
            "x".repeat(512),
            "x".repeat(511) + "y",
            "錠".repeat(512),
            "😀".repeat(256),
            "x".repeat(99),
            "x".repeat(100),
            "x".repeat(101),
            "%41",
            "A",
            "a");

    @Test
    void traversalNamesStayInsideTheDirectory(@TempDir Path dir) {
        for (String name : ODD_NAMES) {
            String fileName = FileNames.fileName(new LockKey("default", name));
            Path file = dir.resolve(fileName).normalize();
            assertThat(file.getParent()).as("parent of the file of '%s'", name).isEqualTo(dir);
            assertThat(fileName).doesNotContain("/", "\\").doesNotStartWith(".").endsWith(".lock");
        }
    }

    @Test
    void distinctLocksNeverShareAFileEvenIgnoringCase() {
        List<LockKey> keys = new ArrayList<>();
        for (String name : ODD_NAMES) {
            keys.add(new LockKey("default", name));
            keys.add(new LockKey("Default", name));
        }
        // the namespace/name boundary must not be ambiguous
        keys.add(new LockKey("a.b", "c"));
        keys.add(new LockKey("a", "b.c"));
        keys.add(new LockKey("a%2E", "b"));
        keys.add(new LockKey("a", "%2Eb"));
        keys.add(new LockKey("ns".repeat(64), "n".repeat(512)));
        keys.add(new LockKey("ns".repeat(64), "n".repeat(511) + "N"));
        Set<String> folded = new HashSet<>();
        for (LockKey key : keys) {
            assertThat(folded.add(FileNames.fileName(key).toLowerCase(Locale.ROOT)))
                    .as("file of %s is its own, even on a case-insensitive file system", key)
                    .isTrue();
        }
    }

    @Test
    void fileNamesAreBoundedAndReadableWhenShort() {
        for (String name : ODD_NAMES) {
            String fileName = FileNames.fileName(new LockKey("錠".repeat(128), name));
            assertThat(fileName.length())
                    .isLessThanOrEqualTo(FileNames.MAX_FILE_NAME)
                    .isLessThanOrEqualTo(255);
            assertThat(fileName).matches("[a-z0-9_%A-F~-]+\\.[a-z0-9_%A-F~-]+\\.lock");
        }
        assertThat(FileNames.fileName(new LockKey("billing", "order-42"))).isEqualTo("billing.order-42.lock");
        assertThat(FileNames.fileName(new LockKey("billing", "Order:42"))).isEqualTo("billing.%4Frder%3A42.lock");
        String prefix = FileNames.namespacePrefix("default");
        for (String name : ODD_NAMES) {
            String fileName = FileNames.fileName(new LockKey("default", name));
            if (FileNames.isHashed(fileName, prefix)) {
                assertThat(FileNames.lockName(fileName, prefix)).isEmpty();
                assertThat(name.length()).as("only long names are hashed").isGreaterThan(30);
            } else {
                assertThat(FileNames.lockName(fileName, prefix))
                        .as("decoded name of %s", fileName)
                        .contains(name);
            }
        }
        assertThat(FileNames.lockName("default.a%2fb.lock", prefix))
                .as("not the canonical spelling")
                .isEmpty();
        assertThat(FileNames.lockName("other.a.lock", prefix)).isEmpty();
    }

    @Test
    void oddNamesMakeOneFileEachDirectlyInTheDirectory(@TempDir Path root) throws IOException {
        Path dir = root.resolve("locks");
        try (Cerberus a = Cerberus.connect("file:" + dir);
                Cerberus b = Cerberus.connect("file:" + dir)) {
            List<DistributedLock> held = new ArrayList<>();
            for (String name : ODD_NAMES) {
                DistributedLock lock = a.lock(name);
                assertThat(lock.tryLock())
                        .as("'%s' is free: no other name shares its file", name)
                        .isTrue();
                held.add(lock);
            }
            for (String name : ODD_NAMES) {
                assertThat(b.lock(name).tryLock()).as("'%s' is held", name).isFalse();
            }
            assertThat(a.inspect("").stream().map(info -> info.name())).containsExactlyInAnyOrderElementsOf(ODD_NAMES);
            held.forEach(DistributedLock::unlock);
        }
        try (Stream<Path> all = Files.walk(root)) {
            List<Path> files = all.filter(Files::isRegularFile).toList();
            assertThat(files)
                    .hasSize(ODD_NAMES.size())
                    .allSatisfy(file -> assertThat(file.getParent()).isEqualTo(dir));
        }
    }
}
