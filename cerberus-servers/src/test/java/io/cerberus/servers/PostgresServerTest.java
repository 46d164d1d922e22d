package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Needs PostgreSQL installed: a missing one fails with the package to install (apt-get install -y postgresql). */
class PostgresServerTest {

    @Test
    void onlyItsLoginUserLogsInOverTcpAndOnlyWithItsPassword() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            String base = "jdbc:postgresql://127.0.0.1:" + server.port() + "/postgres?user=cerberus";
            assertThat(server.uri()).isEqualTo(base + "&password=" + server.password());
            assertThatThrownBy(() -> DriverManager.getConnection(base).close())
                    .as("no password")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("SCRAM");
            assertThatThrownBy(() -> DriverManager.getConnection(base + "&password=" + server.password() + "x")
                            .close())
                    .as("a wrong password")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("password authentication failed");
            assertThatThrownBy(() -> DriverManager.getConnection(
                                    "jdbc:postgresql://127.0.0.1:" + server.port() + "/postgres?user=postgres")
                            .close())
                    .as("the usual superuser's name, no password")
                    .isInstanceOf(SQLException.class);
            assertThat(rows(
                            server.uri(),
                            "SELECT type || ' ' || auth_method FROM pg_hba_file_rules ORDER BY line_number"))
                    .as("pg_hba.conf")
                    .allMatch(rule -> rule.equals("local peer") || rule.equals("host scram-sha-256"));
            assertThat(rows(server.uri(), "SHOW fsync")).containsExactly("off");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(server.dataDir())))
                    .isEqualTo("rwx------");
        }
    }

    @Test
    void givesTheDatabaseUserAndSettingsAskedFor() throws Exception {
        Path dataDir = reachableByTheServersUser();
        try (PostgresServer server = PostgresServer.builder()
                .dataDir(dataDir)
                .user("app")
                .database("orders")
                .fsync(true)
                .maxConnections(30)
                .setting("work_mem", "8MB")
                .start()) {
            assertThat(server.uri())
                    .startsWith("jdbc:postgresql://127.0.0.1:" + server.port() + "/orders?user=app&password=");
            assertThat(rows(server.uri(), "SELECT current_database() || ' ' || current_user"))
                    .containsExactly("orders app");
            assertThat(rows(server.uri(), "SHOW fsync")).containsExactly("on");
            assertThat(rows(server.uri(), "SHOW max_connections")).containsExactly("30");
            assertThat(rows(server.uri(), "SHOW work_mem")).containsExactly("8MB");
        }
        assertThat(dataDir.resolve("PG_VERSION"))
                .as("a given data directory is kept")
                .exists();
        delete(dataDir);
    }

    @Test
    void killEndsItsBackendsSoThatItRestartsAtOnceWithItsData() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            execute(server.uri(), "CREATE TABLE kept (id int)", "INSERT INTO kept VALUES (42)");
            try (Connection open = DriverManager.getConnection(server.uri())) {
                assertThat(open.isValid(2)).isTrue();
                List<ProcessHandle> backends = ProcessHandle.of(server.pid())
                        .orElseThrow()
                        .descendants()
                        .toList();
                assertThat(backends)
                        .as("the postmaster's children, one serving the open connection")
                        .isNotEmpty();
                server.kill();
                assertThat(backends)
                        .as("backends still alive after the kill")
                        .allMatch(ManagedProcessTest::endedOrZombie);
                assertThat(FreePorts.accepts(server.port())).isFalse();
                server.restart();
            }
            assertThat(rows(server.uri(), "SELECT id FROM kept")).containsExactly("42");
        }
    }

    @Test
    void aPausedServerAnswersNothingOnAnOpenConnectionUntilResumed() throws Exception {
        try (PostgresServer server = PostgresServer.start();
                Connection open = DriverManager.getConnection(server.uri() + "&socketTimeout=1")) {
            server.pause();
            assertThatThrownBy(() -> open.createStatement().executeQuery("SELECT 1"))
                    .as("its backend is stopped too")
                    .isInstanceOf(SQLException.class);
            server.resume();
            assertThat(rows(server.uri(), "SELECT 1")).containsExactly("1");
        }
    }

    @Test
    void namesThatGoIntoSqlAndUrlsAreChecked() {
        assertThatThrownBy(() -> PostgresServer.builder().database("orders; DROP"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the database must be 1 to 63 letters, digits and _");
        assertThatThrownBy(() -> PostgresServer.builder().user("1st"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not starting with a digit");
        assertThatThrownBy(() -> PostgresServer.builder().setting("Work Mem", "1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a setting name must be lower-case letters");
        assertThatThrownBy(() -> PostgresServer.builder().maxConnections(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxConnections must be at least 1");
    }

    @Test
    void aFailedSetUpIsAServerExceptionWithItsOutput() throws Exception {
        Path dataDir = Files.createDirectories(reachableByTheServersUser());
        Files.writeString(dataDir.resolve("in-the-way"), "not empty");
        try {
            assertThatThrownBy(() -> PostgresServer.builder().dataDir(dataDir).start())
                    .isInstanceOf(ServerException.class)
                    .hasMessageContaining("initdb failed")
                    .hasMessageContaining("exists but is not empty");
        } finally {
            delete(dataDir);
        }
    }

    /** @return a path that does not exist yet, in a directory the server's system user may enter (not a JUnit @TempDir, mode 0700) */
    private static Path reachableByTheServersUser() {
        return Path.of(System.getProperty("java.io.tmpdir"), "cerberus-given-" + System.nanoTime());
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder())
                    .forEach(file -> file.toFile().delete());
        }
    }

    static List<String> rows(String url, String query) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(query)) {
            List<String> values = new ArrayList<>();
            while (rows.next()) {
                values.add(rows.getString(1));
            }
            return values;
        }
    }

    static void execute(String url, String... statements) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }
}
