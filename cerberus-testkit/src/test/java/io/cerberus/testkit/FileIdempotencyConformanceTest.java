package io.cerberus.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.ManagedProcess;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The file: idempotency store passes the store conformance suite, and holds across processes. */
class FileIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    @TempDir
    Path dir;

    @Override
    protected String engineUri() {
        return "file:" + dir.resolve("locks");
    }

    /**
     * Starts three client processes on this engine, sends each the command at once and collects
     * their answers, in the order of the processes.
     */
    private List<String> askThreeProcesses(String namespace, String command, Duration answerWithin) throws Exception {
        List<ManagedProcess> children = new ArrayList<>();
        ExecutorService askers = Executors.newFixedThreadPool(3);
        try {
            for (int i = 0; i < 3; i++) {
                children.add(ClientProcess.start(engineUri(), namespace, Duration.ofSeconds(30)));
            }
            List<Future<String>> answers = new ArrayList<>();
            for (ManagedProcess child : children) {
                answers.add(askers.submit(() -> child.ask(command, TestTimes.millis(answerWithin.toMillis()))));
            }
            List<String> outcomes = new ArrayList<>();
            for (Future<String> answer : answers) {
                outcomes.add(answer.get(answerWithin.toSeconds() + 20, TimeUnit.SECONDS));
            }
            return outcomes;
        } finally {
            askers.shutdownNow();
            for (ManagedProcess child : children) {
                child.close();
            }
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void threeProcessesRunAKeyOnceAndTheOthersReplayIt() throws Exception {
        List<String> outcomes = askThreeProcesses("once", "ONCE 500 order-7", Duration.ofSeconds(30));
        assertThat(outcomes)
                .filteredOn(line -> line.startsWith("EXECUTED "))
                .as("ran once: %s", outcomes)
                .hasSize(1);
        String ranBy = outcomes.stream()
                .filter(line -> line.startsWith("EXECUTED "))
                .findFirst()
                .orElseThrow()
                .substring(9);
        assertThat(outcomes)
                .filteredOn(line -> line.startsWith("REPLAYED "))
                .as("the others replayed: %s", outcomes)
                .hasSize(2)
                .allSatisfy(line -> assertThat(line).isEqualTo("REPLAYED " + ranBy));
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void threeProcessesRacingThroughTheSameKeysRunEachOnce() throws Exception {
        int keys = 300;
        int executed = 0;
        int replayed = 0;
        for (String answer : askThreeProcesses("many", "MANY " + keys + " race", Duration.ofSeconds(60))) {
            String[] words = answer.split(" ");
            assertThat(words[0]).as("answer %s", answer).isEqualTo("EXECUTED");
            executed += Integer.parseInt(words[1]);
            replayed += Integer.parseInt(words[3]);
        }
        assertThat(executed).as("each key ran once").isEqualTo(keys);
        assertThat(replayed).isEqualTo(2 * keys);
    }

    @Test
    void aReleasedRecordLeavesNoFileAndATornOneCountsAsFree() throws Exception {
        try (LockEngine engine = Engines.open(engineUri(), Duration.ofSeconds(5))) {
            IdempotencyStore records =
                    engine.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            assertThat(records.claim("ns/v1:released", "f", "t1", Duration.ofSeconds(30)))
                    .isEmpty();
            Path recordDir = dir.resolve("locks").resolve("idempotency");
            assertThat(files(recordDir)).hasSize(1);
            assertThat(records.release("ns/v1:released", "t1")).isTrue();
            assertThat(files(recordDir)).as("released: the file is gone").isEmpty();

            assertThat(records.claim("ns/v1:torn", "f", "t2", Duration.ofSeconds(30)))
                    .isEmpty();
            assertThat(records.complete("ns/v1:torn", "t2", "receipt".getBytes(), false, Duration.ofHours(1)))
                    .isTrue();
            Path file = files(recordDir).get(0);
            byte[] bytes = Files.readAllBytes(file);
            Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 3));
            assertThat(records.read("ns/v1:torn"))
                    .as("a torn record is no record")
                    .isEmpty();
            assertThat(records.claim("ns/v1:torn", "f", "t3", Duration.ofSeconds(30)))
                    .as("and can be claimed")
                    .isEmpty();
        }
    }

    private static List<Path> files(Path directory) throws java.io.IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.toList();
        }
    }
}
