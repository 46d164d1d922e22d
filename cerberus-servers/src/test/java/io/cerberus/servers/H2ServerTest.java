package io.cerberus.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs H2's TCP server from the test class path (a test dependency of this module). */
class H2ServerTest {

    @Test
    void aFileDatabaseWrittenAtEachCommitSurvivesAKill(@TempDir Path dir) throws Exception {
        try (H2Server server =
                H2Server.builder().dir(dir).writeDelay(Duration.ZERO).start()) {
            assertThat(server.uri())
                    .isEqualTo("jdbc:h2:tcp://127.0.0.1:" + server.port() + "/cerberus;USER=cerberus;PASSWORD="
                            + server.password() + ";WRITE_DELAY=0");
            execute(server, "CREATE TABLE grants(id INT PRIMARY KEY)", "INSERT INTO grants VALUES (7)");
            assertThat(dir.resolve("cerberus.mv.db")).as("its database file").isRegularFile();
            long pid = server.pid();
            server.kill();
            assertThat(server.isRunning()).isFalse();
            server.restart();
            assertThat(server.pid()).isNotEqualTo(pid);
            assertThat(count(server, "SELECT COUNT(*) FROM grants WHERE id = 7"))
                    .as("the committed row, after the kill")
                    .isEqualTo(1);
        }
        assertThat(dir).as("a directory the caller gave is kept").isDirectory();
    }

    @Test
    void anInMemoryDatabaseIsLostWithItsServer() throws Exception {
        try (H2Server server = H2Server.builder().inMemory().start()) {
            assertThat(server.uri())
                    .isEqualTo("jdbc:h2:tcp://127.0.0.1:" + server.port()
                            + "/mem:cerberus;DB_CLOSE_DELAY=-1;USER=cerberus;PASSWORD=" + server.password());
            execute(server, "CREATE TABLE grants(id INT PRIMARY KEY)", "INSERT INTO grants VALUES (7)");
            assertThat(count(server, "SELECT COUNT(*) FROM grants"))
                    .as("kept between logins")
                    .isEqualTo(1);
            server.restart();
            assertThatThrownBy(() -> count(server, "SELECT COUNT(*) FROM grants"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("GRANTS");
        }
    }

    @Test
    void aLoginWithoutThePasswordOrWithAWrongOneIsRefused() throws Exception {
        for (H2Server.Builder builder :
                List.of(H2Server.builder(), H2Server.builder().inMemory())) {
            try (H2Server server = builder.start()) {
                String database = "jdbc:h2:tcp://127.0.0.1:" + server.port()
                        + (server.inMemory() ? "/mem:cerberus" : "/cerberus");
                assertThat(count(server, "SELECT 1"))
                        .as("with the password of its URI")
                        .isEqualTo(1);
                for (String[] login : List.of(
                        new String[] {"", ""},
                        new String[] {"cerberus", ""},
                        new String[] {"cerberus", "wrong"},
                        new String[] {"sa", ""})) {
                    assertThatThrownBy(() -> DriverManager.getConnection(database, login[0], login[1])
                                    .close())
                            .as("%s as '%s' with '%s'", database, login[0], login[1])
                            .isInstanceOf(SQLException.class)
                            .hasMessageContaining("Wrong user name or password");
                }
            }
        }
    }

    @Test
    void noDatabaseIsCreatedRemotelyAndNoneShutsTheServerDownWithoutItsPassword() throws Exception {
        try (H2Server server = H2Server.start()) {
            for (String other : List.of("other", "mem:other")) {
                assertThatThrownBy(() -> DriverManager.getConnection(
                                        "jdbc:h2:tcp://127.0.0.1:" + server.port() + "/" + other, "intruder", "chosen")
                                .close())
                        .as(other)
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("not found");
            }
            assertThat(server.dir().resolve("other.mv.db")).doesNotExist();
            assertThatThrownBy(() ->
                            org.h2.tools.Server.shutdownTcpServer("tcp://127.0.0.1:" + server.port(), "", false, false))
                    .isInstanceOf(SQLException.class);
            assertThat(count(server, "SELECT 1")).as("still serving").isEqualTo(1);
        }
    }

    @Test
    void aClassPathWithoutH2FailsNamingTheMainClass() {
        assertThatThrownBy(() -> H2Server.builder().classPath("/no/such.jar").start())
                .isInstanceOf(ServerException.class)
                .hasMessageContaining("org.h2.tools.Server")
                .hasMessageContaining("/no/such.jar")
                .hasMessageContaining("com.h2database:h2");
    }

    @Test
    void badSettingsAreRefusedNamingTheRule() {
        assertThatThrownBy(() -> H2Server.builder().writeDelay(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("writeDelay must be 0 or more");
        assertThatThrownBy(() -> H2Server.builder().classPath(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("class path must not be empty");
    }

    private static void execute(H2Server server, String... statements) throws SQLException {
        try (Connection connection = DriverManager.getConnection(server.uri());
                Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }

    private static int count(H2Server server, String query) throws SQLException {
        try (Connection connection = DriverManager.getConnection(server.uri());
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(query)) {
            rows.next();
            return rows.getInt(1);
        }
    }
}
