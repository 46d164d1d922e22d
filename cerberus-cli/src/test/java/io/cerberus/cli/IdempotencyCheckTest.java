package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cerberus check --idempotency} in short runs on a real redis-server: with the guard, pauses
 * shorter than the lease and kills of a client inside an operation apply no effect twice and
 * acknowledge none that was not applied; its negative controls (no guard; a guard whose completion
 * and release do not check the owner) must come out UNSAFE, or the checker proves nothing.
 */
class IdempotencyCheckTest {
    private static final Duration RUN_LIMIT = Duration.ofSeconds(90);

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @TempDir
    Path dir;

    private Cli.Result check(String... args) {
        List<String> given = List.of(args);
        List<String> all = new ArrayList<>(List.of("check", "--idempotency"));
        if (!given.contains("--out")) {
            all.addAll(List.of("--out", dir.resolve("out").toString()));
        }
        String[][] defaults = {{"--duration", "6s"}, {"--lease", "1s"}, {"--fault-every", "1s"}, {"--think", "100ms"}};
        for (String[] option : defaults) {
            if (!given.contains(option[0])) {
                all.addAll(List.of(option));
            }
        }
        all.addAll(given);
        return Cli.run(RUN_LIMIT, all.toArray(String[]::new));
    }

    private static long count(String report, String label) {
        Matcher m = Pattern.compile(Pattern.quote(label) + ":\\s+(\\d+)").matcher(report);
        assertThat(m.find()).as("'%s' in the report:%n%s", label, report).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void theGuardAppliesNoEffectTwiceWhenClientsArePausedWithinTheLeaseOrKilledMidOperation() {
        Cli.Result run = check("--engine", REDIS.uri(), "--faults", "pause,kill");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("verdict:                       SAFE\n");
        assertThat(run.stdout()).containsPattern("pause=[1-9]").containsPattern("kill=[1-9]");
        assertThat(count(run.stdout(), "duplicates")).isZero();
        assertThat(count(run.stdout(), "acknowledged, never applied")).isZero();
        assertThat(count(run.stdout(), "mismatches applied")).isZero();
        assertThat(count(run.stdout(), "replays served")).isPositive();
        assertThat(count(run.stdout(), "mismatches refused")).isPositive();
    }

    @Test
    void anEffectCommittedWithItsRecordIsAppliedOnceWhenClientsAreKilledAfterItAndItsControlIsNot() {
        // a kill aims at an operation that announced it runs: with --effect table, after its row was inserted, so it
        // lands between the effect and the record; in one transaction both go, apart the effect stays and runs again
        Cli.Result together = check("--server", "h2", "--effect", "table", "--faults", "kill", "--duration", "8s");
        // the control runs again only a killed key that some client submits again after its lease, before the key
        // leaves the live window: ten live keys instead of fifty make every client meet each one again and again
        Cli.Result apart = check(
                "--server",
                "h2",
                "--effect",
                "table-apart",
                "--faults",
                "kill",
                "--keys",
                "10",
                "--duration",
                "8s",
                "--out",
                dir.resolve("apart").toString());

        assertThat(together.exitCode()).as(together.toString()).isZero();
        assertThat(together.stdout())
                .contains("effects in cerberus_check_effects with the records")
                .contains("verdict:                       SAFE\n")
                .containsPattern("kill=[1-9]");
        assertThat(count(together.stdout(), "duplicates")).isZero();
        assertThat(count(together.stdout(), "acknowledged, never applied")).isZero();
        assertThat(count(together.stdout(), "effects applied")).isPositive();
        assertThat(apart.exitCode()).as(apart.toString()).isZero();
        assertThat(apart.stdout()).contains("verdict:                       DUPLICATES_EXPLAINED");
        assertThat(count(apart.stdout(), "explained by a fault")).isPositive();
    }

    @Test
    void anEffectInATableNeedsASqlEngineAndTheGuard() {
        Cli.Result redis = check("--engine", REDIS.uri(), "--effect", "table");
        Cli.Result noGuard = check("--server", "h2", "--effect", "table", "--no-guard");

        assertThat(redis.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(redis.stderr()).contains("--effect table keeps the effects in the engine's SQL database");
        assertThat(noGuard.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noGuard.stderr()).contains("its negative control is --effect table-apart");
    }

    @Test
    void negativeControlWithoutTheGuardAppliesEffectsTwiceAndIsUnsafe() {
        Cli.Result run =
                check("--engine", REDIS.uri(), "--no-guard", "--faults", "none", "--duration", "3s", "--keys", "5");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).contains("verdict:                       UNSAFE");
        assertThat(run.stdout()).containsPattern("unexplained: +[1-9]");
    }

    @Test
    void negativeControlAGuardWithoutOwnerCheckedCompletionIsUnsafeWhenAnAttemptOutlivesItsLease() {
        // paused past the lease: another attempt takes the key over, and the paused one's plain SET (or DEL) lands on
        // it
        Cli.Result run = check(
                "--engine",
                REDIS.uri(),
                "--unchecked-guard",
                "--faults",
                "pause",
                "--fault-length",
                "1200ms",
                "--lease",
                "500ms",
                "--keys",
                "4",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(run.stdout()).containsPattern("unexplained: +[1-9]");
    }

    @Test
    void idempotencyOptionsWithoutIdempotencyAreRefusedNamingTheRule() {
        Cli.Result run = Cli.run(
                RUN_LIMIT, "check", "--no-guard", "--out", dir.resolve("out").toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.stderr()).contains("--no-guard applies to --idempotency");
    }

    @Test
    void theUncheckedGuardNeedsRedisAndSaysSo() {
        Cli.Result run = Cli.run(
                RUN_LIMIT,
                "check",
                "--idempotency",
                "--unchecked-guard",
                "--server",
                "postgres",
                "--out",
                dir.resolve("out").toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.stderr())
                .contains("--unchecked-guard is written over Redis: it needs --server redis or a redis:// --engine");
    }
}
