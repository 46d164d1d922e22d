package io.cerberus.servers;

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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Needs PgBouncer and PostgreSQL installed: a missing one fails with the package to install
 * (apt-get install -y pgbouncer postgresql). One PostgreSQL serves the class; each test starts its
 * PgBouncers, which take milliseconds.
 */
class PgBouncerServerTest {
    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        postgres.close();
    }

    @Test
    void sessionPoolingKeepsAClientsSessionAcrossItsTransactions() throws Exception {
        Path dir;
        try (PgBouncerServer bouncer = PgBouncerServer.start(postgres)) {
            dir = bouncer.dir();
            assertThat(bouncer.uri())
                    .isEqualTo("jdbc:postgresql://127.0.0.1:" + bouncer.port() + "/postgres?user=cerberus&password="
                            + postgres.password());
            assertThat(bouncer.poolMode()).isEqualTo(PgBouncerServer.PoolMode.SESSION);
            assertThat(bouncer.show("CONFIG"))
                    .contains("pool_mode|session|session|yes")
                    .anyMatch(row -> row.startsWith("listen_addr|127.0.0.1|"));
            try (Connection client = DriverManager.getConnection(bouncer.uri());
                    Connection other = DriverManager.getConnection(bouncer.uri())) {
                long before = pid(client);
                other.setAutoCommit(false);
                assertThat(pid(other))
                        .as("another client's transaction runs in a session of its own")
                        .isNotEqualTo(before);
                assertThat(pid(client))
                        .as("the client's next transaction, in its own session")
                        .isEqualTo(before);
                other.rollback();
            }
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                    .isEqualTo("rwx------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("userlist.txt"))))
                    .isEqualTo("rw-------");
        }
        assertThat(dir).as("its directory is deleted on close").doesNotExist();
    }

    @Test
    void transactionPoolingLendsAClientsSessionToOthersBetweenItsTransactions() throws Exception {
        try (PgBouncerServer bouncer = PgBouncerServer.builder(postgres)
                        .poolMode(PgBouncerServer.PoolMode.TRANSACTION)
                        .start();
                Connection client = DriverManager.getConnection(bouncer.uri());
                Connection other = DriverManager.getConnection(bouncer.uri())) {
            assertThat(bouncer.show("CONFIG")).contains("pool_mode|transaction|session|yes");
            long before = pid(client);
            other.setAutoCommit(false);
            long others = pid(other);
            long after = pid(client);
            other.rollback();
            assertThat(others == before || after != before)
                    .as(
                            "the session the client had served another client (%d, %d), or the client moved to another (%d)",
                            before, others, after)
                    .isTrue();
        }
    }

    @Test
    void statementPoolingRefusesATransactionOfSeveralStatements() throws Exception {
        try (PgBouncerServer bouncer = PgBouncerServer.builder(postgres)
                        .poolMode(PgBouncerServer.PoolMode.STATEMENT)
                        .start();
                Connection client = DriverManager.getConnection(bouncer.uri())) {
            assertThat(pid(client)).isPositive();
            client.setAutoCommit(false);
            assertThatThrownBy(() -> pid(client))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("transaction blocks not allowed in statement pooling mode");
        }
    }

    @Test
    void onlyTheLoginUserWithItsPasswordGetsThrough() {
        try (PgBouncerServer bouncer = PgBouncerServer.start(postgres)) {
            String base = "jdbc:postgresql://127.0.0.1:" + bouncer.port() + "/postgres?user=cerberus";
            assertThatThrownBy(() -> DriverManager.getConnection(base + "&password=" + postgres.password() + "x")
                            .close())
                    .as("a wrong password")
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("SASL authentication failed");
            assertThatThrownBy(() -> DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + bouncer.port()
                                    + "/postgres?user=postgres&password=x")
                            .close())
                    .as("another user")
                    .isInstanceOf(SQLException.class);
        }
    }

    @Test
    void settingsGoIntoItsConfigurationAndTheLastOneWins() {
        try (PgBouncerServer bouncer = PgBouncerServer.builder(postgres)
                .poolSize(7)
                .maxClients(50)
                .setting("server_login_retry", "1")
                .setting("max_client_conn", "60")
                .start()) {
            assertThat(bouncer.show("CONFIG"))
                    .contains("default_pool_size|7|20|yes", "server_login_retry|1|15|yes")
                    .anyMatch(row -> row.startsWith("max_client_conn|60|"));
        }
    }

    @Test
    void killDropsItsClientsAndRestartServesAgainOnTheSamePort() throws Exception {
        try (PgBouncerServer bouncer = PgBouncerServer.builder(postgres)
                .poolMode(PgBouncerServer.PoolMode.TRANSACTION)
                .start()) {
            try (Connection client = DriverManager.getConnection(bouncer.uri() + "&socketTimeout=5")) {
                assertThat(pid(client)).isPositive();
                bouncer.kill();
                assertThat(FreePorts.accepts(bouncer.port())).isFalse();
                assertThatThrownBy(() -> pid(client)).isInstanceOf(SQLException.class);
            }
            bouncer.restart();
            try (Connection client = DriverManager.getConnection(bouncer.uri())) {
                assertThat(pid(client)).isPositive();
            }
        }
    }

    @Test
    void badOptionsAreRefusedWithTheRule() {
        assertThatThrownBy(() -> PgBouncerServer.builder(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs the PostgreSQL server");
        PgBouncerServer.Builder builder = PgBouncerServer.builder(postgres);
        assertThatThrownBy(() -> builder.setting("Pool Mode", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a setting name must be lower-case letters");
        assertThatThrownBy(() -> builder.setting("pool_mode", "session\n[databases]"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be one line");
        assertThatThrownBy(() -> builder.poolSize(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("poolSize must be at least 1");
        assertThatThrownBy(() -> builder.poolMode(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[SESSION, TRANSACTION, STATEMENT]");
    }

    private static long pid(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT pg_backend_pid()")) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
