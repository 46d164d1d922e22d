package io.cerberus.cli;

import static io.cerberus.cli.CheckRuns.count;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cerberus check --register sql|redis}: the checker's register kept by the fencing helpers users call
 * ({@code FencedRows} in a real PostgreSQL, {@code FencedRedis} in a real redis-server), under a paused holder and
 * a killed server: no update lost, the paused holder's late write refused. Each with its negative control: the same
 * helper given one fence for every call (its check disabled) loses the update.
 */
class CheckRegisterTest {
    @TempDir
    Path dir;

    private Cli.Result check(String... args) {
        return CheckRuns.check(dir, args);
    }

    @Test
    void sqlRowsRefuseAPausedHoldersLateWriteAndSurviveAKilledServer() {
        // two pauses: on a loaded machine the first may come before any client holds (the aim then takes any client)
        Cli.Result run = check(
                "--server",
                "postgres",
                "--register",
                "sql",
                "--faults",
                "pause,pause,server-kill",
                "--think",
                "500ms",
                "--duration",
                "10s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout())
                .contains("registers in SQL rows")
                .contains("verdict:               SAFE_WITH_FENCING")
                .containsPattern("server-kill=[1-9]");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "stale writes stopped"))
                .as("the paused holder's late write, refused by the row's fence")
                .isPositive();
    }

    @Test
    void sqlRowsWithTheirCheckDisabledLoseTheUpdateTheFenceStops() {
        Cli.Result run = check(
                "--server",
                "postgres",
                "--register",
                "sql",
                "--no-fencing",
                "--faults",
                "pause",
                "--think",
                "500ms",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(count(run.stdout(), "lost updates")).isPositive();
        assertThat(count(run.stdout(), "stale writes stopped")).isZero();
    }

    @Test
    void redisKeysRefuseAPausedHoldersLateWriteAndItsNegativeControlLosesIt() {
        Cli.Result fenced = check(
                "--server",
                "redis",
                "--register",
                "redis",
                "--faults",
                "pause",
                "--think",
                "500ms",
                "--duration",
                "8s");
        assertThat(fenced.exitCode()).as(fenced.toString()).isZero();
        assertThat(fenced.stdout()).contains("registers in Redis keys");
        assertThat(count(fenced.stdout(), "lost updates")).isZero();
        assertThat(count(fenced.stdout(), "stale writes stopped")).isPositive();

        Cli.Result unfenced = CheckRuns.check(
                dir.resolve("unfenced"),
                "--server",
                "redis",
                "--register",
                "redis",
                "--no-fencing",
                "--faults",
                "pause",
                "--think",
                "500ms",
                "--duration",
                "8s");
        assertThat(unfenced.exitCode()).as(unfenced.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(count(unfenced.stdout(), "lost updates")).isPositive();
    }

    @Test
    void aRegisterUriKeepsTheRegistersInAnotherStoreThanTheEngine() throws Exception {
        String url = "jdbc:h2:" + dir.resolve("registers") + ";USER=sa;PASSWORD=sa;AUTO_SERVER=TRUE";
        Cli.Result run = check(
                "--engine",
                "file:" + dir.resolve("locks"),
                "--register",
                "sql",
                "--register-uri",
                url,
                "--faults",
                "pause",
                "--duration",
                "3s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(count(run.stdout(), "lost updates")).isZero();
        try (Connection connection = DriverManager.getConnection(url);
                Statement select = connection.createStatement();
                ResultSet row = select.executeQuery(
                        "SELECT reg_value, accepted FROM cerberus_check_registers WHERE name = 'register'")) {
            assertThat(row.next()).isTrue();
            assertThat(row.getLong(1))
                    .as("updates the register took")
                    .isPositive()
                    .isEqualTo(row.getLong(2));
        }
    }

    @Test
    void aRegisterItsStoreCannotKeepIsRefusedNamingTheRule() {
        Cli.Result noServer = check("--engine", "file:" + dir.resolve("locks"), "--register", "sql");
        assertThat(noServer.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noServer.stderr())
                .contains("--register sql keeps the registers in the server of --server postgres, mariadb or h2,"
                        + " or where --register-uri (a jdbc: URI) says");

        Cli.Result lostOnRestart = check("--server", "redis", "--register", "redis", "--faults", "server-kill");
        assertThat(lostOnRestart.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(lostOnRestart.stderr())
                .contains("--register redis with --faults server-kill needs --persistence aof");

        Cli.Result unknown = check("--register", "mongo");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.stderr()).contains("--register takes file, sql, redis, was 'mongo'");
    }
}
