package io.cerberus.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import io.cerberus.Lease;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FencedFileTest {
    @TempDir
    Path dir;

    private static byte[] text(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
    }

    @Test
    void aWriteWithANewerOrEqualFenceIsTakenAndAnOlderOneRefusedWithTheNewestSeen() throws Exception {
        FencedFile report = new FencedFile(dir.resolve("report.txt"));
        report.write(new Fence(0, 5), text("five"));
        report.write(new Fence(0, 5), text("five again"));
        report.write(new Fence(0, 7), text("seven"));
        assertThatThrownBy(() -> report.write(new Fence(0, 6), text("six")))
                .isInstanceOf(StaleFenceException.class)
                .hasMessageContaining("stale fence 0:6 refused by file")
                .hasMessageContaining("has seen fence 0:7")
                .satisfies(e -> assertThat(((StaleFenceException) e).newest()).isEqualTo(new Fence(0, 7)));
        assertThat(Files.readString(report.file()))
                .as("the data is the plain file")
                .isEqualTo("seven");
        assertThat(report.newest()).contains(new Fence(0, 7));
        report.write(new Fence(1, 1), text("after a switch"));
        assertThat(Files.readString(report.file())).isEqualTo("after a switch");
    }

    @Test
    void aReadRecordsTheReadersFenceSoAnOlderReaderCannotWriteAfterIt() {
        FencedFile counter = new FencedFile(dir.resolve("counter"));
        counter.write(new Fence(0, 1), text("0"));
        byte[] seenByOld = counter.read(new Fence(0, 2)).orElseThrow();
        byte[] seenByNew = counter.read(new Fence(0, 3)).orElseThrow();
        counter.write(new Fence(0, 3), text(Integer.parseInt(text(seenByNew)) + 1 + ""));
        assertThatThrownBy(() -> counter.write(new Fence(0, 2), text(Integer.parseInt(text(seenByOld)) + 1 + "")))
                .as("the older reader's write would undo the newer one's")
                .isInstanceOf(StaleFenceException.class);
        assertThatThrownBy(() -> counter.read(new Fence(0, 2))).isInstanceOf(StaleFenceException.class);
        assertThat(counter.read(new Fence(0, 3)).map(FencedFileTest::text)).contains("1");
    }

    @Test
    void aDeleteKeepsTheFenceSoAnOlderHolderCannotCreateTheFileAgain() {
        FencedFile file = new FencedFile(dir.resolve("gone"));
        assertThat(file.read(new Fence(0, 1))).as("no file yet").isEmpty();
        file.write(new Fence(0, 2), text("x"));
        assertThat(file.delete(new Fence(0, 3))).isTrue();
        assertThat(Files.exists(file.file())).isFalse();
        assertThatThrownBy(() -> file.write(new Fence(0, 2), text("back"))).isInstanceOf(StaleFenceException.class);
        assertThat(Files.exists(file.file())).isFalse();
        assertThat(file.delete(new Fence(0, 3))).as("nothing left to delete").isFalse();
    }

    @Test
    void aPausedHolderWakingAfterItsLeaseRanOutIsRefused() throws Exception {
        FencedFile report = new FencedFile(dir.resolve("nightly"));
        try (Cerberus cerberus = Cerberus.connect("mem:fenced-file")) {
            Lease paused = cerberus.lock("nightly").acquire(Duration.ofSeconds(5), Duration.ofMillis(300));
            report.read(Fence.of(paused)); // reads, then "pauses" past its lease
            try (Lease newer = cerberus.lock("nightly").acquire(Duration.ofSeconds(5))) { // once the lease ran out
                report.write(Fence.of(newer), text("the newer holder's report"));
                assertThat(paused.isValid()).isFalse();
                assertThatThrownBy(() -> report.write(Fence.of(paused), text("the late report")))
                        .isInstanceOf(StaleFenceException.class);
            }
        }
        assertThat(Files.readString(report.file())).isEqualTo("the newer holder's report");
    }

    @Test
    void threadsWithDistinctFencesNeverLoseTheNewestWrite() throws Exception {
        FencedFile file = new FencedFile(dir.resolve("race"));
        int writers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int i = 1; i <= writers; i++) {
                long token = i;
                done.add(pool.submit(() -> {
                    start.await();
                    try {
                        new FencedFile(dir.resolve("race")).write(new Fence(0, token), text("written by " + token));
                    } catch (StaleFenceException refused) {
                        assertThat(refused.newest().token()).isGreaterThan(token);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(Files.readString(file.file())).isEqualTo("written by " + writers);
        assertThat(file.newest()).contains(new Fence(0, writers));
    }

    @Test
    void badInputIsRefusedByName() {
        assertThatThrownBy(() -> new FencedFile(Path.of("/")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a file path");
        FencedFile file = new FencedFile(dir.resolve("f"));
        assertThatThrownBy(() -> file.write(null, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a fence");
    }
}
