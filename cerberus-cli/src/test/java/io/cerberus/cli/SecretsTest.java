package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.CerberusMetrics;
import io.cerberus.CerberusMetrics.AcquireOutcome;
import io.cerberus.DistributedLock;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.TestTimes;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An engine password reaches no output: not the client's {@code toString}, its exceptions (causes
 * included), its log records (the drivers' too), the metrics it reports, {@code inspect}, the
 * CLI's output and reports, a child's command line, nor an exec'd command's environment.
 */
class SecretsTest {
    private static final String SECRET = "s3cret-pass";

    /**
     * Every URI shape of every engine on the CLI's class path, with the secret in each place a
     * credential may go (user-info, bare user-info, query parameters), against a closed port.
     */
    static Stream<String> uriShapes() {
        int closed = FreePorts.next();
        String host = "127.0.0.1:" + closed;
        return Stream.of(
                "redis://" + SECRET + "@" + host,
                "redis://app:" + SECRET + "@" + host + "/2?timeout=1s",
                "rediss://app:" + SECRET + "@" + host + "?verifyPeer=CA",
                "redis-sentinel://app:" + SECRET + "@" + host + "#locks",
                "redis-cluster://:" + SECRET + "@" + host,
                "redlock://app:" + SECRET + "@" + host + "," + "127.0.0.1:" + FreePorts.next() + "," + "127.0.0.1:"
                        + FreePorts.next(),
                "zk://" + host + "/cerberus?user=app&password=" + SECRET,
                "etcd://app:" + SECRET + "@" + host,
                "etcds://app:" + SECRET + "@" + host + "/locks?ttl=5",
                "jdbc:postgresql://" + host + "/app?user=app&password=" + SECRET + "&sslpassword=" + SECRET,
                "jdbc:postgresql://app:" + SECRET + "@" + host + "/app",
                "jdbc:mariadb://" + host + "/app?user=app&password=" + SECRET,
                "jdbc:mariadb://app:" + SECRET + "@" + host + "/app?trustStorePassword=" + SECRET);
    }

    @ParameterizedTest
    @MethodSource("uriShapes")
    void aFailedConnectShowsTheEngineWithoutItsSecretInTheErrorOrTheLogs(String uri) {
        String thrown;
        try (CapturedLogs everyLogger = CapturedLogs.of("", Level.INFO);
                CapturedLogs ours = CapturedLogs.of("io.cerberus", Level.ALL)) {
            try (Cerberus client = Cerberus.builder()
                    .engine(uri)
                    .connectTimeout(Duration.ofSeconds(1))
                    .build()) {
                throw new AssertionError("connected to a closed port: " + client);
            } catch (EngineUnavailableException | IllegalArgumentException e) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                thrown = trace.toString();
            }
            assertThat(thrown)
                    .as("the error names the engine, hiding its credentials")
                    .contains("****")
                    .doesNotContain(SECRET);
            assertThat(everyLogger.text()).as("log records").doesNotContain(SECRET);
            assertThat(ours.text()).as("Cerberus's own records, debug included").doesNotContain(SECRET);
        }
    }

    @Test
    void aWorkingClientShowsItsPasswordNowhere() throws Exception {
        int port = FreePorts.next();
        try (RedisServer redis = securedRedis(port);
                CapturedLogs everyLogger = CapturedLogs.of("", Level.INFO);
                CapturedLogs ours = CapturedLogs.of("io.cerberus", Level.ALL)) {
            String uri = "redis://" + SECRET + "@127.0.0.1:" + port;
            List<String> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
            CerberusMetrics metrics = new CerberusMetrics() {
                @Override
                public void acquisition(String engine, String mode, AcquireOutcome outcome, Duration waited) {
                    reported.add(engine + " " + mode);
                }

                @Override
                public void engineSwitch(EngineSwitchEvent event) {
                    reported.add(event.toString());
                }
            };
            try (Cerberus client = Cerberus.builder()
                    .engine(uri)
                    .engine("mem:standby")
                    .metrics(metrics)
                    .build()) {
                DistributedLock lock = client.lock("report");
                assertThat(lock.tryLock()).isTrue();
                List<String> shown = new ArrayList<>(List.of(
                        client.toString(),
                        client.currentEngineUri(),
                        client.engineUri(client.currentEngine()),
                        client.inspect("").toString()));
                Cli.Result inspect =
                        Cli.runWith(Map.of(EngineOptions.ENGINE_ENV, uri), Duration.ofSeconds(30), "inspect");
                assertThat(inspect.exitCode()).as(inspect.toString()).isZero();
                assertThat(inspect.stdout()).as("inspect lists the hold").contains("report");
                shown.add(inspect.toString());
                lock.unlock();
                client.switchEngine("mem");
                client.switchEngine("redis");
                shown.addAll(reported);
                assertThat(reported).as("metrics were reported").anyMatch(line -> line.startsWith("redis "));
                assertThat(String.join("\n", shown)).contains("****").doesNotContain(SECRET);
            }
            assertThat(redis.isRunning())
                    .as("the password-protected server served the whole test")
                    .isTrue();
            assertThat(everyLogger.text()).as("log records").doesNotContain(SECRET);
            assertThat(ours.text())
                    .as("Cerberus's own records, debug included")
                    .contains("****")
                    .doesNotContain(SECRET);
        }
    }

    private static RedisServer securedRedis(int port) {
        return RedisServer.builder().port(port).args("--requirepass", SECRET).start();
    }

    @TempDir
    Path dir;

    @Test
    void aCheckShowsThePasswordNowhereNotEvenInItsClientsCommandLines() throws Exception {
        int port = FreePorts.next();
        try (RedisServer redis = securedRedis(port)) {
            Path out = dir.resolve("out");
            try (ManagedProcess check = Cli.start(
                    "check",
                    "--engine",
                    "redis://" + SECRET + "@127.0.0.1:" + port,
                    "--out",
                    out.toString(),
                    "--duration",
                    "3s",
                    "--lease",
                    "500ms",
                    "--think",
                    "50ms",
                    "--faults",
                    "pause",
                    "--fault-every",
                    "1s")) {
                List<String> workers = new ArrayList<>();
                long deadline = System.nanoTime()
                        + TestTimes.scaled(Duration.ofSeconds(60)).toNanos();
                while (check.isAlive() && System.nanoTime() - deadline < 0) {
                    // the test's own redis-server and the check (given the URI by this test) aside, no process shows
                    // the password
                    ProcessHandle.allProcesses()
                            .filter(process -> process.pid() != redis.pid() && process.pid() != check.pid())
                            .forEach(process -> Cli.commandLine(process.pid()).ifPresent(line -> {
                                if (line.contains("check-worker")) {
                                    workers.add(line);
                                }
                                assertThat(line).as("a command line").doesNotContain(SECRET);
                            }));
                    Thread.sleep(20);
                }
                assertThat(check.awaitExit(TestTimes.scaled(Duration.ofSeconds(30))))
                        .as(check.diagnostics())
                        .isZero();
                assertThat(workers)
                        .as("the check's client JVMs were seen running")
                        .isNotEmpty();
                assertThat(check.diagnostics()).doesNotContain(SECRET);
            }
            assertThat(Files.readString(out.resolve("report.txt")))
                    .contains("cerberus check: redis://****@127.0.0.1:" + port)
                    .doesNotContain(SECRET);
            assertThat(Files.readString(out.resolve("timeline.html")))
                    .contains("****@")
                    .doesNotContain(SECRET);
        }
    }

    @Test
    void execDoesNotHandItsCommandTheEngineVariable() {
        Cli.Result result = Cli.runWith(
                Map.of(EngineOptions.ENGINE_ENV, "file:" + dir.resolve("locks")),
                Duration.ofSeconds(15),
                "exec",
                "--name",
                "job",
                "--",
                "sh",
                "-c",
                "echo \"engine=${CERBERUS_ENGINE-unset}\"");
        assertThat(result.stdout()).as(result.toString()).isEqualTo("engine=unset\n");
    }
}
