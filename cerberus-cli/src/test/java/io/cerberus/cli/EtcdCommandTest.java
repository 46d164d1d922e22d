package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code exec} and {@code inspect} on a real etcd, with the class path of the jar: the etcd engine
 * beside the Redis client and its netty.
 */
class EtcdCommandTest {
    private static final Duration QUICK = Duration.ofSeconds(30);
    private static ManagedProcess etcd;
    private static Path etcdData;
    private static String engine;

    @TempDir
    Path dir;

    @BeforeAll
    static void startEtcd() throws IOException {
        int clientPort = FreePorts.next();
        String client = "http://127.0.0.1:" + clientPort;
        String peer = "http://127.0.0.1:" + FreePorts.next();
        etcdData = Files.createTempDirectory("cerberus-cli-etcd-");
        etcd = ManagedProcess.start("etcd-" + clientPort, List.of(Executables.require("etcd", "etcd-server").toString(),
                "--name", "member", "--data-dir", etcdData.toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "member=" + peer, "--initial-cluster-state", "new"));
        FreePorts.awaitAccepting(clientPort, TestTimes.scaled(Duration.ofSeconds(20)), "etcd");
        engine = "etcd://127.0.0.1:" + clientPort;
        // the member accepts connections before it has elected itself; etcdctl waits until it answers
        ProcessBuilder health = new ProcessBuilder(Executables.require("etcdctl", "etcd-client").toString(),
                "--endpoints", "127.0.0.1:" + clientPort, "--command-timeout", TestTimes.scaled(Duration.ofSeconds(20)).toSeconds() + "s",
                "endpoint", "health").redirectErrorStream(true);
        try {
            Process ctl = health.start();
            String output = new String(ctl.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(ctl.waitFor()).as("etcdctl endpoint health: " + output).isZero();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    static void stopEtcd() throws IOException {
        etcd.close();
        try (var files = Files.walk(etcdData)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void execHoldsTheLockInspectShowsItAndASecondCopyIsRefused() {
        Path other = dir.resolve("other");
        try (ManagedProcess holder = Cli.start("exec", "--engine", engine, "--name", "nightly:etcd", "--",
                "sh", "-c", "echo STARTED; read line; echo FINISHING")) {
            holder.awaitLine("STARTED", TestTimes.scaled(QUICK));

            Cli.Result table = Cli.run(QUICK, "inspect", "--engine", engine);
            Cli.Result second = Cli.run(QUICK, "exec", "--engine", engine, "--name", "nightly:etcd", "--", "touch", other.toString());

            assertThat(table.exitCode()).as(table.toString()).isZero();
            assertThat(table.stdout().lines().findFirst()).hasValueSatisfying(header ->
                    assertThat(header).matches("NAME +MODE +HOLDER +FENCE +LEASE LEFT +WAITERS"));
            assertThat(table.stdout().lines().skip(1)).singleElement().asString()
                    .startsWith("nightly:etcd").contains("exclusive").contains(holder.pid() + "@");
            assertThat(second.exitCode()).as(second.toString()).isEqualTo(ExitCodes.LOCK_BUSY);
            assertThat(second.stderr()).contains("lock 'nightly:etcd' is busy");
            assertThat(other).doesNotExist();

            holder.send("done");
            holder.awaitLine("FINISHING", TestTimes.scaled(QUICK));
            assertThat(holder.awaitExit(TestTimes.scaled(QUICK))).isZero();
        }
        Cli.Result third = Cli.run(QUICK, "exec", "--engine", engine, "--name", "nightly:etcd", "--",
                "sh", "-c", "echo \"$CERBERUS_LOCK_NAME $CERBERUS_FENCING_TOKEN\"");
        assertThat(third.exitCode()).as(third.toString()).isZero();
        assertThat(third.stdout()).matches("nightly:etcd \\d+\\R");
        Cli.Result empty = Cli.run(QUICK, "inspect", "--engine", engine);
        assertThat(empty.exitCode()).as(empty.toString()).isZero();
        assertThat(empty.stdout()).isEqualTo("no locks held" + System.lineSeparator());
    }
}
