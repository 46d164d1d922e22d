package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cerberus check}'s status line, as users see it: on a terminal (a pseudo-terminal from
 * util-linux {@code script}) a line rewritten in place with the time, holds and faults so far,
 * cleared before the report; with the output in files no escape code and no carriage return, plain
 * lines with {@code --progress line} or {@code auto}, none with {@code none}. Short file: runs.
 */
class CheckProgressLineTest {
    private static final Duration RUN_LIMIT = CheckRuns.RUN_LIMIT;
    /** A live line with time, holds and faults, each count past zero. */
    private static final Pattern LIVE =
            Pattern.compile("\r(check \\d+:\\d\\d elapsed, \\d+:\\d\\d left \\| holds ([1-9]\\d*) \\| faults"
                    + " ([1-9]\\d*) \\(\\d+ confirmed\\) \\| stale writes \\d+ \\| lost updates 0)\u001b\\[K");

    private static final Pattern PLAIN =
            Pattern.compile("(?m)^check \\d+:\\d\\d elapsed, \\d+:\\d\\d left \\| holds \\d+ \\| faults \\d+"
                    + " \\(\\d+ confirmed\\) \\| stale writes \\d+ \\| lost updates \\d+$");
    /** A wide terminal, so that no line is cut. */
    private static final Map<String, String> TERMINAL = Map.of("TERM", "xterm", "COLUMNS", "200");

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @TempDir
    Path dir;

    private int runs;

    /** @return the arguments of a short lock check on the file engine, each run with a directory of its own */
    private String[] check(String duration, String... args) {
        List<String> all = new ArrayList<>(List.of(
                "check",
                "--out",
                dir.resolve("out" + ++runs).toString(),
                "--engine",
                "file:" + dir.resolve("locks"),
                "--duration",
                duration,
                "--lease",
                "500ms",
                "--fault-every",
                "1s",
                "--think",
                "100ms"));
        all.addAll(List.of(args));
        return all.toArray(String[]::new);
    }

    @Test
    void onATerminalTheLineIsRewrittenInPlaceWithTimeHoldsAndFaultsAndClearedBeforeTheReport() {
        Cli.Result run = Cli.runInTerminal(TERMINAL, RUN_LIMIT, check("8s"));
        String screen = run.stdout();

        assertThat(run.exitCode()).as(run.toString()).isZero();
        Matcher live = LIVE.matcher(screen);
        assertThat(live.find())
                .as(
                        "a live line with holds and faults past zero in:%n%s",
                        screen.replace("\r", "\\r").replace("\u001b", "\\e"))
                .isTrue();
        int lines = 1;
        while (live.find()) {
            lines++;
        }
        assertThat(lines).as("rewritten about every second in an 8 s run").isGreaterThanOrEqualTo(3);
        assertThat(screen)
                .as("no line of its own: every one starts with a carriage return")
                .doesNotContain("\ncheck 0:");
        int verdict = screen.indexOf("verdict:");
        assertThat(verdict).isPositive();
        assertThat(screen.substring(0, verdict))
                .as("the line is cleared before the report")
                .endsWith("\r\u001b[K");
        assertThat(screen.substring(verdict)).doesNotContain("\u001b").contains("lost updates:          0");
    }

    @Test
    void theIdempotencyCheckShowsOperationsAndEffectsOnATerminal() {
        Cli.Result run = Cli.runInTerminal(
                TERMINAL,
                RUN_LIMIT,
                "check",
                "--idempotency",
                "--out",
                dir.resolve("out").toString(),
                "--engine",
                REDIS.uri(),
                "--duration",
                "6s",
                "--lease",
                "1s",
                "--fault-every",
                "1s",
                "--think",
                "100ms");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout())
                .containsPattern(
                        "\rcheck --idempotency \\d+:\\d\\d elapsed, \\d+:\\d\\d left \\| acknowledged [1-9]\\d*,"
                                + " effects [1-9]\\d* \\| faults [1-9]\\d* \\(\\d+ confirmed\\) \\| duplicates 0\u001b\\[K");
        assertThat(run.stdout().substring(run.stdout().indexOf("verdict:"))).doesNotContain("\u001b");
    }

    @Test
    void withTheOutputInFilesAutoPrintsPlainLinesWithoutEscapeCodesOnStandardErrorOnly() {
        Cli.Result run = Cli.runToFile(Map.of("TERM", "xterm"), RUN_LIMIT, check("4s", "--progress-every", "1s"));

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout())
                .doesNotContain("\u001b")
                .doesNotContain("\r")
                .contains("verdict:")
                .doesNotContain("elapsed");
        assertThat(run.stderr()).doesNotContain("\u001b").doesNotContain("\r");
        assertThat(PLAIN.matcher(run.stderr()).results().count())
                .as("plain lines every second:%n%s", run.stderr())
                .isGreaterThanOrEqualTo(2);
    }

    @Test
    void progressLinePrintsPlainLinesAndNonePrintsNone() {
        Cli.Result line =
                Cli.runToFile(Map.of(), RUN_LIMIT, check("4s", "--progress", "line", "--progress-every", "1s"));
        assertThat(line.exitCode()).as(line.toString()).isZero();
        assertThat(line.stderr()).doesNotContain("\u001b").doesNotContain("\r");
        assertThat(PLAIN.matcher(line.stderr()).results().count())
                .as("plain lines every second:%n%s", line.stderr())
                .isGreaterThanOrEqualTo(2);

        Cli.Result none =
                Cli.runToFile(Map.of(), RUN_LIMIT, check("3s", "--progress", "none", "--progress-every", "1s"));
        assertThat(none.exitCode()).as(none.toString()).isZero();
        assertThat(none.stderr())
                .doesNotContain("elapsed")
                .doesNotContain("\u001b")
                .doesNotContain("\r");
        assertThat(none.stdout()).contains("verdict:").doesNotContain("elapsed");
    }

    @Test
    void aProgressModeOutsideTheListIsAUsageError() {
        Cli.Result run = Cli.usage(check("3s", "--progress", "bar"));

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.stderr()).contains("--progress takes auto, line, none, was 'bar'");
    }
}
