package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code exec} and {@code inspect} on a real etcd, with the class path of the jar: the etcd engine
 * beside the Redis client and its netty.
 */
class EtcdCommandTest {
    private static final Duration QUICK = Duration.ofSeconds(30);

    @RegisterExtension
    static final ServerExtension<EtcdServer> ETCD = ServerExtension.perClass(EtcdServer::start);

    @TempDir
    Path dir;

    @Test
    void execHoldsTheLockInspectShowsItAndASecondCopyIsRefused() {
        Path other = dir.resolve("other");
        try (ManagedProcess holder = Cli.start(
                "exec",
                "--engine",
                ETCD.uri(),
                "--name",
                "nightly:etcd",
                "--",
                "sh",
                "-c",
                "echo STARTED; read line; echo FINISHING")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result table = Cli.run(QUICK, "inspect", "--engine", ETCD.uri());
            Cli.Result second = Cli.run(
                    QUICK, "exec", "--engine", ETCD.uri(), "--name", "nightly:etcd", "--", "touch", other.toString());

            assertThat(table.exitCode()).as(table.toString()).isZero();
            assertThat(table.stdout().lines().findFirst())
                    .hasValueSatisfying(
                            header -> assertThat(header).matches("NAME +MODE +HOLDER +FENCE +LEASE LEFT +WAITERS"));
            assertThat(table.stdout().lines().skip(1))
                    .singleElement()
                    .asString()
                    .startsWith("nightly:etcd")
                    .contains("exclusive")
                    .contains(holder.pid() + "@");
            assertThat(second.exitCode()).as(second.toString()).isEqualTo(ExitCodes.LOCK_BUSY);
            assertThat(second.stderr()).contains("lock 'nightly:etcd' is busy");
            assertThat(other).doesNotExist();

            holder.send("done");
            holder.awaitLine("FINISHING", TestTimes.scaled(QUICK));
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK))).isZero();
        }
        Cli.Result third = Cli.run(
                QUICK,
                "exec",
                "--engine",
                ETCD.uri(),
                "--name",
                "nightly:etcd",
                "--",
                "sh",
                "-c",
                "echo \"$CERBERUS_LOCK_NAME $CERBERUS_FENCING_TOKEN\"");
        assertThat(third.exitCode()).as(third.toString()).isZero();
        assertThat(third.stdout()).matches("nightly:etcd \\d+\\R");
        Cli.Result empty = Cli.run(QUICK, "inspect", "--engine", ETCD.uri());
        assertThat(empty.exitCode()).as(empty.toString()).isZero();
        assertThat(empty.stdout()).isEqualTo("no locks held" + System.lineSeparator());
    }
}
