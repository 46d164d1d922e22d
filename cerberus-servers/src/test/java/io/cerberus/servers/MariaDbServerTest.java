package io.cerberus.servers;

import static io.cerberus.servers.PostgresServerTest.execute;
import static io.cerberus.servers.PostgresServerTest.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Needs MariaDB installed: a missing one fails with the package to install (apt-get install -y mariadb-server). */
class MariaDbServerTest {

    @Test
    void everyAccountNeedsAPasswordOverTcpAndOnlyTheLoginUserHasOne() throws Exception {
        try (MariaDbServer server = MariaDbServer.start()) {
            assertThat(server.uri())
                    .isEqualTo("jdbc:mariadb://127.0.0.1:" + server.port() + "/mysql?user=cerberus&password="
                            + server.password());
            List<String> accounts = rows(server.uri(), "SELECT concat(user, '@', host) FROM mysql.global_priv");
            assertThat(accounts)
                    .as("no anonymous users")
                    .noneMatch(account -> account.startsWith("@"))
                    .contains("root@localhost", "cerberus@127.0.0.1");
            for (String account : accounts) {
                String url = "jdbc:mariadb://127.0.0.1:" + server.port() + "/mysql?user="
                        + account.substring(0, account.indexOf('@'));
                assertThatThrownBy(() -> DriverManager.getConnection(url).close())
                        .as("%s over TCP without a password", account)
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("denied");
            }
            String base = "jdbc:mariadb://127.0.0.1:" + server.port() + "/mysql?user=";
            assertThatThrownBy(() -> DriverManager.getConnection(base + "cerberus&password=" + server.password() + "x")
                            .close())
                    .as("a wrong password")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Access denied");
            assertThatThrownBy(
                            () -> DriverManager.getConnection(base + "nobody").close())
                    .as("an unknown user (an anonymous account would let it in)")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Access denied");
            assertThat(rows(server.uri(), "SELECT @@innodb_flush_log_at_trx_commit"))
                    .containsExactly("2");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(server.dataDir())))
                    .isEqualTo("rwx------");
        }
    }

    @Test
    void eachServerHasATemporaryDirectoryOfItsOwnDeletedWithIt() throws Exception {
        // with the system's /tmp, a server starting in one JVM deleted the #sql files of another one's set-up
        Path first;
        try (MariaDbServer one = MariaDbServer.start();
                MariaDbServer two = MariaDbServer.start()) {
            first = Path.of(rows(one.uri(), "SELECT @@tmpdir").get(0));
            Path second = Path.of(rows(two.uri(), "SELECT @@tmpdir").get(0));
            assertThat(first).isNotEqualTo(second).isNotEqualTo(Path.of(System.getProperty("java.io.tmpdir")));
            assertThat(first).isDirectory();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(first)))
                    .isEqualTo("rwx------");
        }
        assertThat(first).doesNotExist();
    }

    @Test
    void givesTheDatabaseUserAndSettingsAskedForAndKeepsItsDataAcrossAKill() throws Exception {
        try (MariaDbServer server = MariaDbServer.builder()
                .user("app")
                .database("bench")
                .fsync(true)
                .maxConnections(40)
                .setting("innodb-buffer-pool-size", "64M")
                .start()) {
            assertThat(server.uri())
                    .startsWith("jdbc:mariadb://127.0.0.1:" + server.port() + "/bench?user=app&password=");
            assertThat(rows(server.uri(), "SELECT concat(database(), ' ', current_user())"))
                    .containsExactly("bench app@127.0.0.1");
            assertThat(rows(server.uri(), "SELECT @@innodb_flush_log_at_trx_commit"))
                    .containsExactly("1");
            assertThat(rows(server.uri(), "SELECT @@max_connections")).containsExactly("40");
            assertThat(rows(server.uri(), "SELECT @@innodb_buffer_pool_size"))
                    .containsExactly(Long.toString(64L << 20));
            execute(server.uri(), "CREATE TABLE kept (id int)", "INSERT INTO kept VALUES (42)");
            server.kill();
            assertThat(FreePorts.accepts(server.port())).isFalse();
            server.restart();
            assertThat(rows(server.uri(), "SELECT id FROM kept")).containsExactly("42");
        }
    }
}
