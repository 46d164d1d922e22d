package io.cerberus.cli;

import static io.cerberus.cli.CheckRuns.confirmed;
import static io.cerberus.cli.CheckRuns.count;
import static io.cerberus.cli.CheckRuns.injected;
import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.check.log.HoldLog;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The safety checker's rows that chance alone does not fill: MariaDB under client and server
 * kills, an etcd cluster with a majority down, and a Sentinel failover that loses a grant on
 * purpose — unsafe without {@code waitReplicas}, safe with it. Real servers, short runs.
 */
class CheckMissingRowsTest {
    @TempDir
    Path dir;

    @Test
    void mariaDbLeaseRowLocksLoseNoUpdateUnderPausesKillsAndServerKills() {
        Cli.Result run = CheckRuns.check(
                dir,
                "--server",
                "mariadb",
                "--faults",
                "pause,kill,server-kill",
                "--server-down",
                "0",
                "--think",
                "300ms",
                "--duration",
                "7s");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).containsPattern("pause=[1-9]").containsPattern("kill=[1-9]");
        assertThat(confirmed(run.stdout(), "server-kill"))
                .as("mariadbd exited, port closed, logins again")
                .isEqualTo(injected(run.stdout(), "server-kill"))
                .isPositive();
        assertThat(run.stdout())
                .as("the lease rows are committed InnoDB rows: a crash keeps them")
                .containsPattern("verdict: +SAFE");
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
    }

    @Test
    void etcdGrantsNothingWhileAMajorityIsDownAndLosesNothingWhenItReturns() {
        Cli.Result run =
                CheckRuns.check(dir, "--server", "etcd", "--faults", "majority-kill", "--server-down", "1500ms");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(confirmed(run.stdout(), "majority-kill"))
                .as("2 members exited, ports closed, a leader again")
                .isEqualTo(injected(run.stdout(), "majority-kill"))
                .isPositive();
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
        assertThat(count(run.stdout(), "longest time unheld"))
                .as("ms; the outage")
                .isGreaterThanOrEqualTo(1500);
        // from the kill, confirmed, to the end of the time down (the restart begins after it): no client may be granted
        List<HoldLog.Event> faults = CheckRuns.events(dir, "FAULT");
        List<HoldLog.Event> grants = CheckRuns.events(dir, "ACQ");
        int outages = 0;
        for (int i = 0; i < faults.size(); i++) {
            if (faults.get(i).detail().startsWith("majority-kill ")) {
                long from = faults.get(i).nanos();
                long to = faults.stream()
                        .skip(i)
                        .filter(event -> event.detail().startsWith("majority-down "))
                        .findFirst()
                        .orElseThrow()
                        .nanos();
                assertThat(grants)
                        .as("grants while the majority was down")
                        .noneMatch(grant -> grant.nanos() > from && grant.nanos() < to);
                outages++;
            }
        }
        assertThat(outages).isPositive();
    }

    @Test
    void aSentinelFailoverLosesAGrantTheReplicaNeverHad() {
        // one failover: cut at 2 s, promoted about 3.5 s later, then 2-3 s for a grant on the promoted replica
        Cli.Result run = CheckRuns.check(
                dir,
                "--server",
                "sentinel",
                "--faults",
                "failover-unreplicated",
                "--fault-every",
                "2s",
                "--duration",
                "8s");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(CheckCommand.UNSAFE);
        assertThat(confirmed(run.stdout(), "failover-unreplicated"))
                .as("replica cut off, a grant on the primary alone, promoted")
                .isEqualTo(injected(run.stdout(), "replica-cut"))
                .isPositive();
        assertThat(count(run.stdout(), "tokens backwards"))
                .as("the promoted replica hands out the lost grant's token again")
                .isPositive();
        assertThat(CheckRuns.file(dir, "faults.log")).containsPattern("grant\\(s\\) never replicated");
    }

    @Test
    void waitReplicasKeepsASentinelFailoverFromLosingAGrant() {
        Cli.Result run = CheckRuns.check(
                dir,
                "--server",
                "sentinel",
                "--faults",
                "failover-unreplicated",
                "--fault-every",
                "2s",
                "--duration",
                "8s",
                "--wait-replicas",
                "1");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(confirmed(run.stdout(), "failover-unreplicated"))
                .as("replica cut off, a grant on the primary alone, promoted")
                .isEqualTo(injected(run.stdout(), "replica-cut"))
                .isPositive();
        assertThat(count(run.stdout(), "tokens backwards")).isZero();
        assertThat(count(run.stdout(), "lost updates")).isZero();
        assertThat(CheckRuns.events(dir, "ENGINE"))
                .as("the grant the replica did not acknowledge, given back")
                .anyMatch(event -> event.detail().equals("acquire failed"));
    }
}
