package io.cerberus.check.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** How the status line is written ({@link ProgressLine}): live on a terminal, plain lines otherwise, never with none. */
class ProgressLineTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void plainLinesComeEveryPeriodWithoutEscapeCodesAndNoneComeWithNone() {
        StringWriter plain = new StringWriter();
        try (ProgressLine line =
                ProgressLine.start("line", Duration.ofSeconds(1), new PrintWriter(plain), () -> "check 0:01 elapsed")) {
            assertThat(line.live()).isFalse();
            awaitTrue(() -> plain.toString().split("\n").length >= 2);
        }
        assertThat(plain.toString())
                .startsWith("check 0:01 elapsed\ncheck 0:01 elapsed\n")
                .doesNotContain("\r")
                .doesNotContain("\u001b");

        StringWriter none = new StringWriter();
        ProgressLine.start("none", Duration.ofSeconds(1), new PrintWriter(none), () -> "never")
                .close();
        assertThat(none.toString()).isEmpty();
    }

    @Test
    void aLiveLineIsRewrittenInPlaceCutToTheWidthAndClearedOnClose() {
        StringWriter screen = new StringWriter();
        try (ProgressLine line = ProgressLine.live(new PrintWriter(screen), () -> "x".repeat(30), 21)) {
            assertThat(line.live()).isTrue();
            awaitTrue(() -> screen.toString().contains("\u001b[K"));
        }
        assertThat(screen.toString())
                .startsWith("\r" + "x".repeat(17) + "...\u001b[K")
                .endsWith("\r\u001b[K")
                .doesNotContain("\n");
    }

    @Test
    void whatOthersPrintOnStandardErrorFirstClearsALiveLine() {
        StringWriter screen = new StringWriter();
        java.io.PrintStream before = System.err;
        java.io.ByteArrayOutputStream others = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(others, true, java.nio.charset.StandardCharsets.UTF_8));
        try (ProgressLine line = ProgressLine.live(new PrintWriter(screen), () -> "check 0:01 elapsed", 80)) {
            assertThat(line.live()).isTrue();
            awaitTrue(() -> screen.toString().contains("\u001b[K"));
            System.err.println("check client c1: refused; trying again");
            assertThat(screen.toString()).as("the line, then cleared").contains("elapsed\u001b[K\r\u001b[K");
        } finally {
            System.setErr(before);
        }
        assertThat(others.toString(java.nio.charset.StandardCharsets.UTF_8))
                .isEqualTo("check client c1: refused; trying again\n");
    }

    @Test
    void theClockAndTheCutAreWhatATerminalShows() {
        assertThat(ProgressLine.clock(0)).isEqualTo("0:00");
        assertThat(ProgressLine.clock(-5 * SECOND)).isEqualTo("0:00");
        assertThat(ProgressLine.clock(754 * SECOND)).isEqualTo("12:34");
        assertThat(ProgressLine.clock(3723 * SECOND)).isEqualTo("1:02:03");
        assertThat(ProgressLine.cut("short", 80)).isEqualTo("short");
        assertThat(ProgressLine.cut("0123456789", 10)).isEqualTo("012345...");
    }

    @Test
    void aModeOutsideTheListOrAPeriodUnderASecondIsRefused() {
        assertThatThrownBy(() -> ProgressLine.check("bar", Duration.ofSeconds(30)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--progress takes auto, line, none, was 'bar'");
        assertThatThrownBy(() -> ProgressLine.check("line", Duration.ofMillis(500)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--progress-every must be at least 1s, was 500ms");
    }

    /** Polls until the condition holds, failing after 10 s. */
    private static void awaitTrue(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("condition within 10 s").isNegative();
            Thread.onSpinWait();
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
