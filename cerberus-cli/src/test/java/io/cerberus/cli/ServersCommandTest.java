package io.cerberus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.TestTimes;
import java.net.URI;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code cerberus servers} starts real servers, prints URIs an engine connects to, and stops them all on SIGTERM. */
class ServersCommandTest {
    private static final Duration START = TestTimes.scaled(Duration.ofSeconds(60));

    @Test
    void theServersServeLocksUntilSigtermStopsThemAll() {
        Map<String, String> uris = new LinkedHashMap<>();
        try (ManagedProcess servers = Cli.start("servers", "--kinds", "redis,memcached,postgres,mariadb,h2")) {
            for (String line = servers.nextLine(START); !line.startsWith("ready"); line = servers.nextLine(START)) {
                String[] fields = line.split("\\s+", 2);
                uris.put(fields[0], fields[1]);
            }
            assertThat(uris).containsOnlyKeys("redis", "memcached", "postgres", "mariadb", "h2");
            assertThat(uris.get("h2"))
                    .as("how to log in to H2, as to PostgreSQL and MariaDB")
                    .containsPattern(";USER=cerberus;PASSWORD=[A-Za-z0-9_-]{32}");
            String h2WithoutPassword = uris.get("h2").replaceFirst(";USER=.*$", "");
            assertThatThrownBy(
                            () -> DriverManager.getConnection(h2WithoutPassword).close())
                    .as("H2 without the password")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Wrong user name or password");
            for (String uri : uris.values()) {
                try (Cerberus cerberus = Cerberus.builder().engine(uri).build()) {
                    DistributedLock lock = cerberus.lock("by-hand");
                    assertThat(lock.tryLock()).as(uri).isTrue();
                    lock.unlock();
                }
            }

            servers.signal("TERM");
            assertThat(servers.awaitLine("stopped", START)).isEqualTo("stopped");
            assertThat(servers.awaitExit(START)).as("the exit code of SIGTERM").isEqualTo(143);
        }
        for (String uri : uris.values()) {
            assertThat(FreePorts.accepts(
                            URI.create(uri.replaceFirst("^jdbc:(h2:)?", "")).getPort()))
                    .as("%s after the stop", uri)
                    .isFalse();
        }
    }

    @Test
    void anUnknownKindIsAUsageErrorNamingTheKinds() {
        Cli.Result run = Cli.run(Duration.ofSeconds(30), "servers", "--kinds", "redis,oracle");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.stderr()).contains("no server kind 'oracle'").contains("redis, ");
    }
}
