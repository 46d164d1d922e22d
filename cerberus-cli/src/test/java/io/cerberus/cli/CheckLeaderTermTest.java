package io.cerberus.cli;

import static io.cerberus.cli.CheckRuns.confirmed;
import static io.cerberus.cli.CheckRuns.count;
import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.HoldLog;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cerberus check --primitive leader --leader-term D}: an elected leader keeps leading and acts on the register
 * act after act, its term as the token, until D after its election; on a real redis-server with real pauses and
 * kills. Its negative control: with fencing ignored, a leader paused mid-act wakes and writes over the newer term's
 * writes, which must be judged UNSAFE.
 */
class CheckLeaderTermTest {
    private static final Duration RUN_LIMIT = CheckRuns.RUN_LIMIT;

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @TempDir
    Path dir;

    @Test
    void aLongLivedLeaderActsManyTimesPerTermAndStaysSafeUnderPausesAndKills() {
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                REDIS.uri(),
                "--primitive",
                "leader",
                "--leader-term",
                "1500ms",
                "--faults",
                "pause,kill",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("leader election with terms of up to 1.5s on");
        assertThat(run.stdout()).containsPattern("verdict: +SAFE");
        assertThat(confirmed(run.stdout(), "pause")).isPositive();
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards"))
                .as("terms strictly increase")
                .isZero();
        Map<String, Long> writesPerTerm = CheckRuns.events(dir, "WRITE").stream()
                .collect(Collectors.groupingBy(CheckLeaderTermTest::term, Collectors.counting()));
        assertThat(writesPerTerm.values())
                .as("a term's writes (think 100 ms in a term of 1.5 s)")
                .anyMatch(writes -> writes >= 5);
        assertThat(CheckRuns.events(dir, "ACQ").stream().map(CheckLeaderTermTest::term))
                .as("one grant per term, however many acts")
                .doesNotHaveDuplicates();
    }

    @Test
    void negativeControlALeaderPausedMidActWithFencingIgnoredOverwritesTheNewerTerm() {
        // a long act, so that the pause, aimed at the leader, lands between its read and its write
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                REDIS.uri(),
                "--primitive",
                "leader",
                "--leader-term",
                "2s",
                "--no-fencing",
                "--faults",
                "pause",
                "--think",
                "300ms",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).contains("fencing ignored");
        assertThat(count(run.stdout(), "lost updates")).isPositive();
        assertThat(count(run.stdout(), "stale writes stopped")).isZero();
        assertThat(count(run.stdout(), "overlapping holds"))
                .as("the paused leader's term against the one elected while it slept")
                .isPositive();
    }

    @Test
    void aLeaderTermIsRefusedWithoutTheLeaderPrimitiveAndUnderAMillisecond() {
        Cli.Result lock = Cli.usage("check", "--leader-term", "2s");
        assertThat(lock.exitCode()).isEqualTo(64);
        assertThat(lock.stderr()).contains("--leader-term applies to --primitive leader");
        Cli.Result zero = Cli.usage("check", "--primitive", "leader", "--leader-term", "0");
        assertThat(zero.exitCode()).isEqualTo(64);
        assertThat(zero.stderr()).contains("--leader-term must be at least 1ms, was 0ms");
        Cli.Result tiny = Cli.usage("check", "--primitive", "leader", "--leader-term", "500us");
        assertThat(tiny.exitCode()).isEqualTo(64);
        assertThat(tiny.stderr()).contains("--leader-term must be at least 1ms, was 0ms");
        Cli.Result negative = Cli.usage("check", "--primitive", "leader", "--leader-term", "-1s");
        assertThat(negative.exitCode()).isEqualTo(64);
        assertThat(negative.stderr()).contains("'-1s' is not a duration");
        Cli.Result idempotency = Cli.usage("check", "--idempotency", "--leader-term", "2s", "--engine", "mem:");
        assertThat(idempotency.exitCode()).isEqualTo(64);
        assertThat(idempotency.stderr()).contains("--leader-term applies to --primitive leader");
    }

    /** @return the term an event is about: {@code CLIENT/TERM} */
    private static String term(HoldLog.Event event) {
        return event.client() + "/" + event.token();
    }
}
