package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InspectCommandTest {
    private static final Duration QUICK = Duration.ofSeconds(15);

    @TempDir
    Path dir;

    @Test
    void showsTheLockHeldByARunningExec() {
        String engine = "file:" + dir.resolve("locks");
        try (ManagedProcess holder = Cli.start(
                "exec", "--engine", engine, "--name", "nightly:report", "--", "sh", "-c", "echo STARTED; read line")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result table = Cli.run(QUICK, "inspect", "--engine", engine);
            Cli.Result filtered = Cli.run(QUICK, "inspect", "--engine", engine, "other:");

            assertThat(table.exitCode()).as(table.toString()).isZero();
            assertThat(table.stdout().lines()).hasSize(2);
            assertThat(table.stdout().lines().findFirst())
                    .hasValueSatisfying(
                            header -> assertThat(header).matches("NAME +MODE +HOLDER +FENCE +LEASE LEFT +WAITERS"));
            assertThat(table.stdout().lines().skip(1).findFirst())
                    .hasValueSatisfying(row -> assertThat(row)
                            .startsWith("nightly:report")
                            .contains("exclusive")
                            .contains(holder.pid() + "@"));
            assertThat(filtered.exitCode()).as(filtered.toString()).isZero();
            assertThat(filtered.stdout()).isEqualTo("no locks held" + System.lineSeparator());
            holder.send("done");
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK))).isZero();
        }
    }

    @Test
    void aHolderStringIsPrintedWithItsControlCharactersEscaped() throws Exception {
        String engine = "file:" + dir.resolve("locks");
        // a holder string carries its thread's name, which any application chooses: here one that would retitle the
        // terminal, clear the screen and read right-to-left
        String hostile = "worker\u001b]0;pwned\u0007\u001b[2J\u202eevil";
        try (Cerberus cerberus = Cerberus.connect(engine)) {
            java.util.concurrent.atomic.AtomicReference<io.cerberus.Lease> held =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread taker = new Thread(
                    () -> {
                        try {
                            held.set(cerberus.lock("report").acquire(Duration.ZERO));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    hostile);
            taker.start();
            taker.join();
            try (io.cerberus.Lease lease = held.get()) {
                Cli.Result table = Cli.run(QUICK, "inspect", "--engine", engine);

                assertThat(table.exitCode()).as(table.toString()).isZero();
                assertThat(lease.isValid()).isTrue();
                assertThat(table.stdout())
                        .doesNotContain("\u001b")
                        .doesNotContain("\u0007")
                        .doesNotContain("\u202e")
                        .contains("worker\\u001b]0;pwned\\u0007\\u001b[2J\\u202eevil");
            }
        }
    }

    @Test
    void withSeveralEnginesShowsOneTablePerEngineAndMarksTheCurrentOne() {
        String first = "file:" + dir.resolve("first");
        String second = "file:" + dir.resolve("second");
        try (ManagedProcess holder = Cli.start(
                "exec", "--engine", second, "--name", "on-second", "--", "sh", "-c", "echo STARTED; read line")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result both = Cli.run(QUICK, "inspect", "--engine", first, "--engine", second);

            assertThat(both.exitCode()).as(both.toString()).isZero();
            assertThat(both.stdout().lines())
                    .containsSubsequence("engine file (current):", "no locks held", "", "engine file2:");
            assertThat(both.stdout()).contains("on-second");
            holder.send("done");
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK))).isZero();
        }
    }

    @Test
    void aRedisThatMayEvictLockKeysIsRefusedWithItsOwnExitCodeUnlessAccepted() {
        try (RedisServer evicting = RedisServer.start("--maxmemory", "16mb", "--maxmemory-policy", "allkeys-lru")) {
            Cli.Result refused = Cli.run(QUICK, "inspect", "--engine", evicting.uri());
            Cli.Result accepted = Cli.run(QUICK, "inspect", "--engine", evicting.uri() + "?acceptEviction=true");

            assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(78);
            assertThat(refused.stderr())
                    .contains("allkeys-lru")
                    .contains("acceptEviction=true")
                    .contains("noeviction");
            assertThat(accepted.exitCode()).as(accepted.toString()).isZero();
            assertThat(accepted.stdout()).isEqualTo("no locks held" + System.lineSeparator());
        }
    }

    @Test
    void commandsOfOneEngineRefuseSeveral() {
        Cli.Result exec = Cli.run(
                QUICK,
                "exec",
                "--engine",
                "file:" + dir.resolve("a"),
                "--engine",
                "file:" + dir.resolve("b"),
                "--name",
                "n",
                "--",
                "true");
        assertThat(exec.exitCode()).as(exec.toString()).isEqualTo(64);
        assertThat(exec.stderr()).contains("--engine was given 2 times");
    }
}
