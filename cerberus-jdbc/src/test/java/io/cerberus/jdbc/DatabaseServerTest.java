package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The test servers are not open to the other users of the machine: over TCP they ask every account
 * for its password, and their unix sockets lie in data directories only the servers' users enter.
 */
class DatabaseServerTest {
    private static DatabaseServer.Postgres postgres;
    private static DatabaseServer.MariaDb mariaDb;

    @BeforeAll
    static void start() {
        postgres = DatabaseServer.Postgres.start();
        mariaDb = DatabaseServer.MariaDb.start();
    }

    @AfterAll
    static void stop() {
        if (postgres != null) {
            postgres.close();
        }
        if (mariaDb != null) {
            mariaDb.close();
        }
    }

    @Test
    void postgresRefusesALoginWithoutItsPasswordOrWithAWrongOne() throws Exception {
        String withoutPassword = "jdbc:postgresql://127.0.0.1:" + postgres.port + "/postgres?user=" + DatabaseServer.USER;
        assertThatThrownBy(() -> DriverManager.getConnection(withoutPassword).close()).as("no password")
                .isInstanceOf(SQLException.class).hasMessageContaining("SCRAM");
        assertThatThrownBy(() -> DriverManager.getConnection(withoutPassword + "&password=" + postgres.password + "x").close())
                .as("a wrong password").isInstanceOf(SQLException.class).hasMessageContaining("password authentication failed");
        assertThatThrownBy(() -> DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + postgres.port + "/postgres?user=postgres")
                .close()).as("the usual superuser's name, no password").isInstanceOf(SQLException.class);
        try (Connection connection = DriverManager.getConnection(postgres.url()); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT type, auth_method FROM pg_hba_file_rules ORDER BY line_number")) {
            List<String> rules = new ArrayList<>();
            while (rows.next()) {
                rules.add(rows.getString(1) + " " + rows.getString(2));
            }
            assertThat(rules).as("pg_hba.conf").allMatch(rule -> rule.equals("local peer") || rule.equals("host scram-sha-256"));
        }
        assertPrivate(postgres.dataDir);
    }

    @Test
    void mariaDbRefusesEveryAccountOverTcpWithoutAPassword() throws Exception {
        List<String> accounts = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection(mariaDb.url()); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT user, host FROM mysql.global_priv")) {
            while (rows.next()) {
                accounts.add(rows.getString(1) + "@" + rows.getString(2));
            }
        }
        assertThat(accounts).as("no anonymous users").noneMatch(account -> account.startsWith("@"))
                .contains("root@localhost", DatabaseServer.USER + "@127.0.0.1");
        for (String account : accounts) {
            String user = account.substring(0, account.indexOf('@'));
            String url = "jdbc:mariadb://127.0.0.1:" + mariaDb.port + "/mysql?user=" + user;
            assertThatThrownBy(() -> DriverManager.getConnection(url).close()).as("%s over TCP without a password", account)
                    .isInstanceOf(SQLException.class).hasMessageContaining("denied");
        }
        String wrong = "jdbc:mariadb://127.0.0.1:" + mariaDb.port + "/mysql?user=" + DatabaseServer.USER + "&password=" + mariaDb.password
                + "x";
        assertThatThrownBy(() -> DriverManager.getConnection(wrong).close()).as("a wrong password").isInstanceOf(SQLException.class)
                .hasMessageContaining("Access denied");
        assertThatThrownBy(() -> DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + mariaDb.port + "/mysql?user=nobody").close())
                .as("an unknown user (an anonymous account would let it in)").isInstanceOf(SQLException.class)
                .hasMessageContaining("Access denied");
        assertPrivate(mariaDb.dataDir);
    }

    /** The directory of the server's data and unix socket: only its owner (the server's user) may enter. */
    private static void assertPrivate(Path dataDir) throws Exception {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dataDir))).as("mode of %s", dataDir).isEqualTo("rwx------");
    }
}
