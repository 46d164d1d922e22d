package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Per-application isolation enforced by PostgreSQL itself: one database user per application, who
 * owns a schema holding that application's lock and idempotency tables
 * ({@code cerberus.table=appa.cerberus_locks}); another application's user is refused by the
 * database on every statement. (Session mode gives no such isolation: advisory locks are not
 * subject to privileges; see docs/JDBC.md.)
 */
class JdbcIsolationTest {
    private static String base;

    @BeforeAll
    static void users() throws Exception {
        base = Servers.postgres();
        try (Connection admin = DriverManager.getConnection(base); Statement statement = admin.createStatement()) {
            for (String app : new String[] {"appa", "appb"}) {
                statement.execute("DROP SCHEMA IF EXISTS " + app + " CASCADE");
                statement.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + app + "') THEN CREATE ROLE "
                        + app + " LOGIN; END IF; END $$");
                statement.execute("CREATE SCHEMA " + app + " AUTHORIZATION " + app);
            }
        }
    }

    /** @return a client logged in as {@code user}, on the lock table of {@code app}'s schema */
    private static Cerberus app(String user, String app) {
        String url = base.replace("user=cerberus", "user=" + user) + "&cerberus.table=" + app + ".cerberus_locks"
                + (user.equals(app) ? "" : "&cerberus.createTable=false");
        return Cerberus.builder().engine(url).namespace("orders").connectTimeout(Duration.ofSeconds(5)).build();
    }

    @Test
    void eachAppLocksAndGuardsInItsOwnSchemaWithItsOwnUser() throws Exception {
        try (Cerberus a = app("appa", "appa"); Cerberus b = app("appb", "appb")) {
            DistributedLock lock = a.lock("order:1");
            assertThat(lock.tryLock()).isTrue();
            assertThat(b.lock("order:1").tryLock()).as("same namespace and name, other app: another lock").isTrue();
            b.lock("order:1").unlock();
            lock.unlock();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-1");
            assertThat(a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged").status())
                    .isEqualTo(Outcome.Status.EXECUTED);
            assertThat(b.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged").status())
                    .as("another app's record").isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Test
    void appBsUserCannotEvenStartOnAppAsTablesWhenItWouldCreateThem() {
        try (Cerberus a = app("appa", "appa")) {
            assertThat(a.lock("warm-up").tryLock()).isTrue();
            a.lock("warm-up").unlock();
            String url = base.replace("user=cerberus", "user=appb") + "&cerberus.table=appa.cerberus_locks";
            assertThatThrownBy(() -> Cerberus.builder().engine(url).connectTimeout(Duration.ofSeconds(5)).build())
                    .hasStackTraceContaining("permission denied for schema appa");
        }
    }

    @Test
    void appBsUserCannotReadReleaseOrBlockAppAsLocksAndRecords() throws Exception {
        try (Cerberus a = app("appa", "appa")) {
            DistributedLock lock = a.lock("order:2");
            assertThat(lock.tryLock()).isTrue();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-2");
            a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged");
            try {
                assertThatThrownBy(() -> app("appb", "appa")).as("a client of B on A's table does not start")
                        .hasMessageContaining("may not use the lock table appa.cerberus_locks").hasMessageContaining("permission denied");
                try (Connection b = DriverManager.getConnection(base.replace("user=cerberus", "user=appb"));
                        Statement statement = b.createStatement()) {
                    for (String sql : new String[] {"SELECT * FROM appa.cerberus_locks", "DELETE FROM appa.cerberus_locks",
                            "UPDATE appa.cerberus_locks SET expires_at = 0", "SELECT * FROM appa.cerberus_locks_idem",
                            "DELETE FROM appa.cerberus_locks_idem"}) {
                        assertThatThrownBy(() -> statement.execute(sql)).as("B by hand: %s", sql).hasMessageContaining("permission denied");
                    }
                }
            } finally {
                assertThat(lock.lease().isValid()).as("A's lock is untouched").isTrue();
                lock.unlock();
            }
            assertThat(a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "again").status())
                    .as("A's record is untouched").isEqualTo(Outcome.Status.REPLAYED);
        }
    }
}
