package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The bench's status line: its text and estimate, plain and live writing, without a bench run. */
class BenchProgressTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void theLineNamesTheRunningCellOfHowManyAndEstimatesTheTimeLeftFromTheCellsDone() {
        assertThat(BenchProgress.format(0, 36, "redis: warming every peer up", 20 * SECOND, 0))
                .isEqualTo("bench cell 1 of 36: redis: warming every peer up | 0:20 elapsed, estimating the time left");
        // 6 cells in 180 s: 30 s each; 30 cells left, 10 s into the 7th
        assertThat(BenchProgress.format(6, 36, "redis contended T=4", 190 * SECOND, 180 * SECOND))
                .isEqualTo("bench cell 7 of 36: redis contended T=4 | 3:10 elapsed, about 14:50 left");
        assertThat(BenchProgress.format(36, 36, "zk held-locks", 3700 * SECOND, 3700 * SECOND))
                .isEqualTo("bench cell 36 of 36: zk held-locks | 1:01:40 elapsed, about 0:00 left");
    }

    @Test
    void plainLinesCarryNoEscapeCodeAndSkippedCellsLeaveTheTotal() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (BenchProgress progress = BenchProgress.open(
                new PrintStream(bytes, true, StandardCharsets.UTF_8), false, Duration.ofSeconds(1), 10, 80)) {
            progress.skip(4);
            progress.cell("redis uncontended T=1");
            awaitTrue(() -> bytes.toString(StandardCharsets.UTF_8).contains("\n"));
        }
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertThat(text)
                .startsWith("bench cell 1 of 6: redis uncontended T=1 | 0:0")
                .doesNotContain("\r")
                .doesNotContain("\u001b");
    }

    @Test
    void aLiveLineIsClearedBeforeOtherTextOnStandardErrorAndWhenClosed() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream before = System.err;
        PrintStream terminal =
                new PrintStream(bytes, true, StandardCharsets.UTF_8); // standard error, as the line sees it
        System.setErr(terminal);
        try (BenchProgress progress = BenchProgress.open(terminal, true, Duration.ofSeconds(1), 3, 200)) {
            progress.cell("redis contended T=4");
            awaitTrue(() -> bytes.toString(StandardCharsets.UTF_8).contains("\u001b[K"));
            System.err.println("a cell's result");
        } finally {
            PrintStream after = System.err;
            System.setErr(before);
            assertThat(after).as("standard error given back").isSameAs(terminal);
        }
        String screen = bytes.toString(StandardCharsets.UTF_8);
        assertThat(screen)
                .startsWith("\rbench cell 1 of 3: redis contended T=4 | 0:0")
                .contains("\u001b[K\r\u001b[Ka cell's result\n");
        String after = screen.substring(screen.indexOf("a cell's result\n") + "a cell's result\n".length());
        assertThat(after)
                .as("nothing, or the line drawn again and cleared at the close")
                .matches("|\r[^\n]*\u001b\\[K\r\u001b\\[K");
    }

    @Test
    void aModeOutsideTheListIsRefused() {
        assertThatThrownBy(() -> BenchProgress.start("bar", Duration.ofSeconds(30), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--progress takes auto, line, none, was 'bar'");
        assertThatThrownBy(() -> BenchProgress.start("line", Duration.ofMillis(100), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--progress-every must be at least 1");
    }

    /** Polls until the condition holds, failing after 10 s. */
    private static void awaitTrue(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("condition within 10 s").isNegative();
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
