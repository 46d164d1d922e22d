package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.cerberus.Cerberus;
import io.cerberus.CerberusException;
import io.cerberus.DistributedLock;
import io.cerberus.LockInfo;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.Passwords;
import io.cerberus.servers.PostgresServer;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.ServerExtension;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-application isolation enforced by the database itself, with password authentication: one
 * database user per application, with its own password, alone allowed to use the schema
 * (PostgreSQL and H2: it owns it) or database (MariaDB: it alone is granted it) that holds its lock and
 * idempotency tables ({@code cerberus.table=appa.cerberus_locks}). Another application's user,
 * logged in with its own credentials and pointed at those tables, is refused by the database on
 * every statement: its client does not start, and each operation its engine would send, and each
 * statement typed by hand, fails with the database's refusal. (Session mode gives no such
 * isolation on PostgreSQL and MariaDB: advisory locks and {@code GET_LOCK} are not subject to privileges;
 * see docs/JDBC.md.)
 */
class JdbcIsolationTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();
    /**
     * A file database: its URL carries no setting, which only an administrator may give at login.
     * Shared, as the others: a per-class server of an outer class is started again for each nested one.
     */
    @RegisterExtension
    static final ServerExtension<H2Server> H2_SERVER = ServerExtension.shared("jdbc-isolation-h2", H2Server::start);

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    @Nested
    class Postgres extends Isolation {
        @Override
        String adminUrl() {
            return POSTGRES.uri();
        }

        @Override
        void createApp(Statement admin, String app, String password) throws SQLException {
            admin.execute("DROP SCHEMA IF EXISTS " + app + " CASCADE");
            admin.execute("DROP ROLE IF EXISTS " + app);
            admin.execute("CREATE ROLE " + app + " LOGIN PASSWORD '" + password + "'");
            admin.execute("CREATE SCHEMA " + app + " AUTHORIZATION " + app);
        }

        @Override
        String userUrl(String user, String password) {
            String admin = adminUrl();
            return admin.substring(0, admin.indexOf('?')) + "?user=" + user + "&password=" + password;
        }

        @Override
        SqlDialect dialect(String table) {
            return new PostgresDialect(table);
        }

        @Override
        String refusal() {
            return "permission denied";
        }
    }

    @Nested
    class MariaDb extends Isolation {
        @Override
        String adminUrl() {
            return MARIADB.uri();
        }

        /** The grant docs/JDBC.md names: the four statements on the tables, and CREATE for the engine to create them. */
        @Override
        void createApp(Statement admin, String app, String password) throws SQLException {
            admin.execute("DROP DATABASE IF EXISTS " + app);
            admin.execute("DROP USER IF EXISTS '" + app + "'@'127.0.0.1'");
            admin.execute("CREATE USER '" + app + "'@'127.0.0.1' IDENTIFIED BY '" + password + "'");
            admin.execute("CREATE DATABASE " + app);
            admin.execute("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON " + app + ".* TO '" + app + "'@'127.0.0.1'");
        }

        @Override
        String userUrl(String user, String password) {
            String admin = adminUrl();
            // the user's own database is its default one
            return admin.substring(0, admin.lastIndexOf('/') + 1) + user + "?user=" + user + "&password=" + password;
        }

        @Override
        SqlDialect dialect(String table) {
            return new MariaDbDialect(table);
        }

        @Override
        String refusal() {
            return "command denied";
        }
    }

    @Nested
    class H2 extends Isolation {
        @Override
        String adminUrl() {
            return H2_SERVER.uri();
        }

        /** What docs/JDBC.md names for H2: a user without admin rights that owns its schema. */
        @Override
        void createApp(Statement admin, String app, String password) throws SQLException {
            admin.execute("DROP SCHEMA IF EXISTS " + app + " CASCADE");
            admin.execute("DROP USER IF EXISTS " + app);
            admin.execute("CREATE USER " + app + " PASSWORD '" + password + "'");
            admin.execute("CREATE SCHEMA " + app + " AUTHORIZATION " + app);
        }

        @Override
        String userUrl(String user, String password) {
            return H2_SERVER.get().url() + ";USER=" + user + ";PASSWORD=" + password;
        }

        @Override
        SqlDialect dialect(String table) {
            return new H2Dialect(table);
        }

        @Override
        String refusal() {
            return "Not enough rights";
        }
    }

    /** The isolation cases, for a server with its own way to give each application its own tables. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class Isolation {
        private final Map<String, String> passwords = Map.of("appa", Passwords.random(), "appb", Passwords.random());

        /** @return the server's administrator URL */
        abstract String adminUrl();

        /** Creates the user {@code app} with {@code password}, and the schema or database of that name that it alone may use. */
        abstract void createApp(Statement admin, String app, String password) throws SQLException;

        /** @return the URL on which {@code user} logs in with {@code password} */
        abstract String userUrl(String user, String password);

        abstract SqlDialect dialect(String table);

        /** @return what the database says when it refuses a statement for lack of privileges */
        abstract String refusal();

        @BeforeAll
        void users() throws SQLException {
            try (Connection admin = DriverManager.getConnection(adminUrl());
                    Statement statement = admin.createStatement()) {
                for (Map.Entry<String, String> app : passwords.entrySet()) {
                    createApp(statement, app.getKey(), app.getValue());
                }
            }
        }

        /** @return the engine URI of {@code user}, with its own password, on the lock table of {@code app} */
        private String uri(String user, String app) {
            return userUrl(user, passwords.get(user)) + "&cerberus.table=" + app + ".cerberus_locks";
        }

        /** @return a client logged in as {@code user}, on the lock table of {@code app} */
        private Cerberus app(String user, String app) {
            String uri = uri(user, app) + (user.equals(app) ? "" : "&cerberus.createTable=false");
            return Cerberus.builder()
                    .engine(uri)
                    .namespace("orders")
                    .connectTimeout(TIMEOUT)
                    .build();
        }

        /**
         * @return an engine logged in as appb on appa's tables, past the check at start that refuses
         *     such a client: every operation goes to the database as a client of B would send it
         */
        private LockEngine appBsEngineOnAppAsTables() {
            JdbcTarget target = JdbcTarget.parse(uri("appb", "appa"), JdbcOptions.defaults());
            ConnectionSource source = ConnectionSource.of(target, JdbcOptions.defaults(), TIMEOUT);
            return new LeaseRowEngine(new Db(source, dialect(target.table()), TIMEOUT), false);
        }

        /** Each statement, sent by appb with its own password, is refused by the database. */
        private void refusedToAppBByHand(String... statements) throws SQLException {
            try (Connection b = DriverManager.getConnection(userUrl("appb", passwords.get("appb")));
                    Statement statement = b.createStatement()) {
                for (String sql : statements) {
                    assertThatThrownBy(() -> statement.execute(sql))
                            .as("B by hand: %s", sql)
                            .hasMessageContaining(refusal());
                }
            }
        }

        private void refusedToAppB(Map<String, ThrowingCallable> operations) {
            operations.forEach((what, operation) -> assertThatThrownBy(operation)
                    .as("B's engine on A's tables: %s", what)
                    .isInstanceOf(CerberusException.class)
                    .hasMessageContaining(refusal()));
        }

        @Test
        void eachAppLocksAndGuardsInItsOwnTablesWithItsOwnUser() throws Exception {
            try (Cerberus a = app("appa", "appa");
                    Cerberus b = app("appb", "appb")) {
                DistributedLock lock = a.lock("order:1");
                assertThat(lock.tryLock()).isTrue();
                assertThat(b.lock("order:1").tryLock())
                        .as("same namespace and name, other app: another lock")
                        .isTrue();
                b.lock("order:1").unlock();
                lock.unlock();
                IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-1");
                assertThat(a.idempotency(IdempotencyOptions.defaults())
                                .execute(key, Duration.ofHours(1), () -> "charged")
                                .status())
                        .isEqualTo(Outcome.Status.EXECUTED);
                assertThat(b.idempotency(IdempotencyOptions.defaults())
                                .execute(key, Duration.ofHours(1), () -> "charged")
                                .status())
                        .as("another app's record")
                        .isEqualTo(Outcome.Status.EXECUTED);
            }
        }

        @Test
        void appBsClientDoesNotStartOnAppAsTables() {
            try (Cerberus a = app("appa", "appa")) {
                assertThat(a.lock("warm-up").tryLock()).isTrue();
                a.lock("warm-up").unlock();
            }
            assertThatThrownBy(() -> app("appb", "appa"))
                    .as("with cerberus.createTable=false")
                    .hasMessageContaining("may not use the lock table appa.cerberus_locks")
                    .hasMessageContaining(refusal());
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(uri("appb", "appa"))
                            .connectTimeout(TIMEOUT)
                            .build())
                    .as("when it would create the tables")
                    .hasMessageContaining("may not use the lock table appa.cerberus_locks")
                    .hasMessageContaining(refusal());
        }

        @Test
        void appBsUserCannotListReadTakeExtendReleaseOrDeleteAppAsLocks() throws Exception {
            LockKey key = new LockKey("orders", "order:2");
            Acquisition held = new Acquisition(
                    key,
                    LockMode.EXCLUSIVE,
                    UUID.randomUUID().toString().replace("-", ""),
                    "appa",
                    Duration.ofSeconds(30));
            try (LockEngine a = Engines.open(uri("appa", "appa"), TIMEOUT);
                    LockEngine b = appBsEngineOnAppAsTables()) {
                AcquireResult granted = a.tryAcquire(held);
                assertThat(granted).isInstanceOf(AcquireResult.Granted.class);
                long fence = ((AcquireResult.Granted) granted).fencingToken();

                Acquisition taking = new Acquisition(
                        key,
                        LockMode.EXCLUSIVE,
                        UUID.randomUUID().toString().replace("-", ""),
                        "appb",
                        Duration.ofSeconds(30));
                Map<String, ThrowingCallable> operations = new LinkedHashMap<>();
                operations.put(
                        "list (inspect)",
                        () -> b.ability(Inspects.class).orElseThrow().inspect("orders", ""));
                operations.put("read (isLocked)", () -> b.isLocked(key));
                operations.put("take", () -> b.tryAcquire(taking));
                operations.put("extend A's hold, even with A's token", () -> b.renew(held));
                operations.put(
                        "extend A's hold in a batch",
                        () -> b.ability(RenewsInBatches.class).orElseThrow().renewAll(List.of(held)));
                operations.put("release A's hold, even with A's token", () -> b.release(held));
                refusedToAppB(operations);
                refusedToAppBByHand(
                        "SELECT * FROM appa.cerberus_locks",
                        "UPDATE appa.cerberus_locks SET expires_at = 0",
                        "DELETE FROM appa.cerberus_locks",
                        "INSERT INTO appa.cerberus_locks (lock_key, namespace, name, fence, expires_at)"
                                + " VALUES ('k', 'orders', 'order:9', 1, 0)");

                assertThat(a.ability(Inspects.class).orElseThrow().inspect("orders", "order:2"))
                        .as("A's hold is untouched")
                        .extracting(LockInfo::holder, LockInfo::fencingToken)
                        .containsExactly(tuple("appa", fence));
                assertThat(a.renew(held)).as("A still holds").isTrue();
                assertThat(a.release(held)).isTrue();
            }
        }

        @Test
        void appBsUserCannotReadClaimCompleteOrDeleteAppAsIdempotencyRecords() throws Exception {
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-3");
            String id = "orders/" + key.id();
            String token = UUID.randomUUID().toString().replace("-", "");
            try (Cerberus a = app("appa", "appa");
                    LockEngine b = appBsEngineOnAppAsTables()) {
                assertThat(a.idempotency(IdempotencyOptions.defaults())
                                .execute(key, Duration.ofHours(1), () -> "charged")
                                .status())
                        .isEqualTo(Outcome.Status.EXECUTED);
                IdempotencyStore store =
                        b.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
                Map<String, ThrowingCallable> operations = new LinkedHashMap<>();
                operations.put("read", () -> store.read(id));
                operations.put("claim", () -> store.claim(id, key.fingerprint(), token, Duration.ofSeconds(30)));
                operations.put("extend a claim", () -> store.renew(id, token, Duration.ofSeconds(30)));
                operations.put(
                        "complete",
                        () -> store.complete(
                                id, token, "forged".getBytes(StandardCharsets.UTF_8), false, Duration.ofHours(1)));
                operations.put("release (delete)", () -> store.release(id, token));
                refusedToAppB(operations);
                refusedToAppBByHand(
                        "SELECT * FROM appa.cerberus_locks_idem",
                        "UPDATE appa.cerberus_locks_idem SET expires_at = 0",
                        "DELETE FROM appa.cerberus_locks_idem");

                Outcome<String> again =
                        a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "again");
                assertThat(again.status()).as("A's record is untouched").isEqualTo(Outcome.Status.REPLAYED);
                assertThat(again.value()).isEqualTo("charged");
            }
        }
    }
}
