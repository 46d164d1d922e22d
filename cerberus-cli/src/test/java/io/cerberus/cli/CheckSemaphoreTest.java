package io.cerberus.cli;

import static io.cerberus.cli.CheckRuns.confirmed;
import static io.cerberus.cli.CheckRuns.count;
import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.HoldLog;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cerberus check --primitive semaphore --permits N}: each client loop takes one permit and acts on its slot's
 * register, keyed by the permit's fence name and fenced by its token; each slot is judged as a lock, and the writers
 * the registers accepted at once never outnumber the permits. On the {@code file:} engine and a real redis-server, with
 * real pauses, kills and cuts. Its negative controls: without the permit, and with fencing ignored, more clients act
 * at once than there are permits, which must be judged UNSAFE.
 */
class CheckSemaphoreTest {
    private static final Duration RUN_LIMIT = CheckRuns.RUN_LIMIT;

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @TempDir
    Path dir;

    @Test
    void aSemaphoreOnTheFileEngineNeverHasMoreWritersThanPermitsUnderPausesAndKills() throws Exception {
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                "file:" + dir.resolve("locks"),
                "--primitive",
                "semaphore",
                "--permits",
                "2",
                "--faults",
                "pause,kill",
                "--think",
                "300ms");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("a semaphore of 2 permits on file:");
        assertThat(run.stdout()).contains("verdict:               SAFE\n");
        assertThat(run.stdout()).containsPattern("most writers at once: +[12] of 2 permits");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(CheckRuns.events(dir, "ACQ"))
                .as("each hold is about its slot")
                .extracting(HoldLog.Event::lock)
                .containsOnly(0, 1);
        assertThat(dir.resolve("out/register-cerberus-check#0"))
                .as("a register per slot, keyed by its fence name")
                .exists();
        assertThat(Files.readString(dir.resolve("out/register-cerberus-check#1")))
                .isNotBlank();
    }

    @Test
    void aSemaphoreOnRedisLosesNoUpdateWhenHoldersArePausedKilledAndCutOff() {
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                REDIS.uri(),
                "--primitive",
                "semaphore",
                "--permits",
                "2",
                "--faults",
                "pause,kill,partition",
                "--think",
                "300ms");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).containsPattern("verdict: +SAFE");
        assertThat(confirmed(run.stdout(), "pause")).isPositive();
        assertThat(run.stdout()).containsPattern("most writers at once: +[12] of 2 permits");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
    }

    @Test
    void negativeControlWithoutThePermitMoreClientsWriteAtOnceThanThereArePermits() {
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                "file:" + dir.resolve("locks"),
                "--primitive",
                "semaphore",
                "--permits",
                "2",
                "--clients",
                "4",
                "--no-lock",
                "--faults",
                "none",
                "--think",
                "20ms",
                "--duration",
                "2s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).contains("no lock (2 slots)");
        assertThat(run.stdout()).containsPattern("most writers at once: +[3-4] of 2 permits");
        assertThat(run.stdout()).contains("more writers than permits at ");
    }

    @Test
    void negativeControlWithFencingIgnoredAPausedHoldersLateWriteMakesOneWriterTooMany() {
        // one permit, long critical sections: the pause lands between a holder's read and its write
        Cli.Result run = CheckRuns.check(
                dir,
                "--engine",
                REDIS.uri(),
                "--primitive",
                "semaphore",
                "--permits",
                "1",
                "--no-fencing",
                "--faults",
                "pause",
                "--think",
                "500ms");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).contains("fencing ignored");
        assertThat(count(run.stdout(), "stale writes stopped")).isZero();
        assertThat(count(run.stdout(), "lost updates")).isPositive();
        assertThat(run.stdout()).containsPattern("most writers at once: +[2-9] of 1 permit ");
    }

    @Test
    void permitsAreRefusedWithoutTheSemaphoreAndOutOfRange() {
        Cli.Result lock = Cli.usage("check", "--permits", "3");
        assertThat(lock.exitCode()).isEqualTo(64);
        assertThat(lock.stderr()).contains("--permits applies to --primitive semaphore");
        Cli.Result none = Cli.usage("check", "--primitive", "semaphore", "--permits", "0");
        assertThat(none.exitCode()).isEqualTo(64);
        assertThat(none.stderr()).contains("--permits must be 1 to 64, was 0");
        Cli.Result many = Cli.usage("check", "--primitive", "semaphore", "--permits", "65");
        assertThat(many.exitCode()).isEqualTo(64);
        assertThat(many.stderr()).contains("--permits must be 1 to 64, was 65");
        Cli.Result slots = Cli.usage("check", "--primitive", "semaphore", "--permits", "64", "--locks", "200");
        assertThat(slots.exitCode()).isEqualTo(64);
        assertThat(slots.stderr())
                .contains("--locks times --permits must be at most 10000 (a register per slot), was 200 x 64");
        Cli.Result recipe =
                Cli.usage("check", "--primitive", "semaphore", "--recipe", "set-nx-px-del", "--server", "redis");
        assertThat(recipe.exitCode()).isEqualTo(64);
        assertThat(recipe.stderr()).contains("--primitive semaphore takes Cerberus's permits; --recipe replaces");
        Cli.Result idempotency = Cli.usage("check", "--idempotency", "--primitive", "semaphore", "--engine", "mem:");
        assertThat(idempotency.exitCode()).isEqualTo(64);
        assertThat(idempotency.stderr())
                .contains("--primitive semaphore applies to the lock check, not to --idempotency");
        Cli.Result switching =
                Cli.usage("check", "--primitive", "semaphore", "--second-engine", "file:" + dir, "--faults", "switch");
        assertThat(switching.exitCode()).isEqualTo(64);
        assertThat(switching.stderr()).contains("--second-engine applies to the lock check with Cerberus's locks");
        Cli.Result unknown = Cli.usage("check", "--primitive", "barrier");
        assertThat(unknown.exitCode()).isEqualTo(64);
        assertThat(unknown.stderr()).contains("--primitive takes lock, leader or semaphore; 'barrier' is none of them");
    }
}
