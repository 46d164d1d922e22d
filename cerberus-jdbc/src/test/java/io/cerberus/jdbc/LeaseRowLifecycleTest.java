package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a lease-row lock leaves in its table, and its fencing tokens, on PostgreSQL, MariaDB and H2: a released
 * or expired name leaves no row once swept, while every name's tokens, drawn from the table's sequence, only grow, across
 * releases, expiries, engine restarts and an upgrade from a table whose rows kept per-name fences.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LeaseRowLifecycleTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    private final String namespace = "rows-" + UUID.randomUUID().toString().substring(0, 8);
    private final String table = "rows_" + UUID.randomUUID().toString().substring(0, 8);
    private final List<LockEngine> engines = new ArrayList<>();

    @AfterEach
    void close() {
        engines.forEach(LockEngine::close);
    }

    private static String url(String database) {
        return switch (database) {
            case "postgres" -> POSTGRES.uri();
            case "mariadb" -> MARIADB.uri();
            default -> H2.uri();
        };
    }

    private LockEngine engine(String database) {
        return engine(database, "");
    }

    private LockEngine engine(String database, String settings) {
        LockEngine engine = Engines.open(
                Databases.with(url(database), "cerberus.table=" + table + (settings.isEmpty() ? "" : "&" + settings)),
                Duration.ofSeconds(10));
        engines.add(engine);
        return engine;
    }

    private Acquisition attempt(String name, Duration lease) {
        return new Acquisition(
                new LockKey(namespace, name),
                LockMode.EXCLUSIVE,
                UUID.randomUUID().toString().replace("-", ""),
                "test",
                lease);
    }

    private static long granted(LockEngine engine, Acquisition attempt) {
        AcquireResult result = engine.tryAcquire(attempt);
        assertThat(result).as("%s is granted", attempt).isInstanceOf(AcquireResult.Granted.class);
        return ((AcquireResult.Granted) result).fencingToken();
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "h2"})
    void releasedNamesLeaveNoRowOnceTheEngineClosesButTheEpochRowStays(String database) throws Exception {
        LockEngine engine = engine(database);
        engine.ability(KeepsEpochs.class).orElseThrow().raiseEpoch(namespace, 7);
        for (int i = 0; i < 200; i++) {
            Acquisition attempt = attempt("name-" + i, Duration.ofSeconds(30));
            granted(engine, attempt);
            assertThat(engine.release(attempt)).isTrue();
        }
        assertThat(rows(database, "name <> ''"))
                .as("rows of names released once: deleted")
                .isZero();
        for (int i = 0; i < 3; i++) {
            Acquisition again = attempt("again", Duration.ofSeconds(30));
            granted(engine, again);
            assertThat(engine.release(again)).isTrue();
        }
        assertThat(rows(database, "name = 'again'"))
                .as("the row of a name released again: left free, except on H2")
                .isEqualTo(database.equals("h2") ? 0 : 1);
        assertThat(rows(database, "name <> '' AND owner IS NOT NULL"))
                .as("rows with an owner")
                .isZero();
        engine.close();
        assertThat(rows(database, "name <> ''"))
                .as("rows of the released names once the engine closed")
                .isZero();
        assertThat(rows(database, "name = ''")).as("the epoch row").isEqualTo(1);
        assertThat(engine(database).ability(KeepsEpochs.class).orElseThrow().epoch(namespace))
                .isEqualTo(7);
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "h2"})
    void tokensOfANameGrowAcrossReleasesExpiriesAndRestarts(String database) throws Exception {
        LockEngine first = engine(database);
        LockEngine second = engine(database);
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Acquisition attempt = attempt("order:42", Duration.ofSeconds(30));
            tokens.add(granted(i % 2 == 0 ? first : second, attempt));
            Acquisition retry = attempt;
            assertThat(granted(i % 2 == 0 ? first : second, retry))
                    .as("a retry by the same attempt keeps its fence")
                    .isEqualTo(tokens.get(tokens.size() - 1));
            assertThat((i % 2 == 0 ? first : second).release(attempt)).isTrue();
        }
        // a holder that dies: its lease runs out, another client takes the name over
        Acquisition crashed = attempt("order:42", Duration.ofMillis(300));
        tokens.add(granted(first, crashed));
        Acquisition takeover = attempt("order:42", Duration.ofSeconds(30));
        Poll.until(
                "the dead holder's lease to run out",
                TestTimes.millis(10_000),
                () -> second.tryAcquire(takeover) instanceof AcquireResult.Granted);
        tokens.add(granted(second, takeover));
        assertThat(second.release(takeover)).isTrue();
        // a restart: every engine closed, a new one opened on the same table
        first.close();
        second.close();
        engines.clear();
        Acquisition afterRestart = attempt("order:42", Duration.ofSeconds(30));
        tokens.add(granted(engine(database), afterRestart));
        assertThat(tokens)
                .as("the tokens of one name, in the order granted")
                .isSorted()
                .doesNotHaveDuplicates();
    }

    /**
     * A new row's fence is drawn once the acquire holds the row's lock (MariaDB: by an {@code UPDATE} after the
     * insert), not when the insert's values are evaluated: an acquire that waits for another transaction's lock on
     * the key (its insert of the row, deleted again before it commits) gets a fence above one drawn while it waited.
     */
    @Test
    void anInsertedRowDrawsItsFenceAfterTheKeysLockIsGrantedOnMariaDb() throws Exception {
        Acquisition earlier = attempt("contended", Duration.ofSeconds(30));
        LockEngine engine = engine("mariadb");
        granted(engine, earlier); // the table, its sequence, and a fence drawn
        assertThat(engine.release(earlier)).isTrue(); // released once: the row is gone, the next acquire inserts it
        String key = LockRows.key(table, new LockKey(namespace, "contended"));
        try (Connection blocker = DriverManager.getConnection(url("mariadb"));
                Connection third = DriverManager.getConnection(url("mariadb"))) {
            blocker.setAutoCommit(false);
            try (PreparedStatement insert = blocker.prepareStatement("INSERT INTO " + table
                    + " (lock_key, namespace, name, owner, holder, fence, expires_at)"
                    + " VALUES (?, ?, 'contended', 'blocker', NULL, 1, 0)")) {
                insert.setString(1, key);
                insert.setString(2, namespace);
                insert.executeUpdate();
            }
            Acquisition waiting = attempt("contended", Duration.ofSeconds(30));
            // a thread of its own, which the database holds up
            FutureTask<AcquireResult> result = new FutureTask<>(() -> engine.tryAcquire(waiting));
            new Thread(result, "acquire-waiting").start();
            Poll.until(
                    "the acquire to wait for the key's lock", TestTimes.millis(10_000), () -> waitsForRowLock(third));
            long drawnMeanwhile;
            try (Statement statement = third.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT NEXTVAL(" + table + "_fence_seq)")) {
                rows.next();
                drawnMeanwhile = rows.getLong(1);
            }
            try (PreparedStatement delete = blocker.prepareStatement("DELETE FROM " + table + " WHERE lock_key = ?")) {
                delete.setString(1, key);
                delete.executeUpdate();
            }
            blocker.commit();
            AcquireResult answer = result.get(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(answer).isInstanceOf(AcquireResult.Granted.class);
            assertThat(((AcquireResult.Granted) answer).fencingToken())
                    .as("the fence of the acquire that waited, against one drawn while it waited")
                    .isGreaterThan(drawnMeanwhile);
        }
    }

    /**
     * @return whether a transaction waits for a row lock of this test's table: read from {@code SHOW ENGINE INNODB
     *     STATUS}, since {@code information_schema.INNODB_TRX} is a cache refreshed only after 100 ms unread, which
     *     a poll every few milliseconds never lets happen
     */
    private boolean waitsForRowLock(Connection connection) {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SHOW ENGINE INNODB STATUS")) {
            rows.next();
            String status = rows.getString("Status");
            int waiting = status.indexOf("TO BE GRANTED");
            return waiting >= 0 && status.indexOf(table, waiting) >= 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "h2"})
    void anUpgradedTableStartsTheSequenceAboveItsLargestFence(String database) throws Exception {
        long huge = 5_000_000_000_000L;
        SqlDialect dialect = dialect(database, table);
        try (Connection connection = DriverManager.getConnection(url(database));
                Statement statement = connection.createStatement()) {
            statement.execute(dialect.createTable());
            // the rows an earlier version left: a name released at a huge fence, another one free at a small one
            statement.execute("INSERT INTO " + table + " (lock_key, namespace, name, owner, holder, fence, expires_at)"
                    + " VALUES ('" + LockRows.key(table, new LockKey(namespace, "old")) + "', '" + namespace
                    + "', 'old', NULL, NULL, " + huge + ", 0), ('"
                    + LockRows.key(table, new LockKey(namespace, "small"))
                    + "', '" + namespace + "', 'small', NULL, NULL, 3, 0)");
        }
        assertThatThrownBy(() -> engine(database, "cerberus.createTable=false"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has no fence sequence " + table + "_fence_seq")
                .hasMessageContaining("CREATE SEQUENCE IF NOT EXISTS " + table + "_fence_seq START WITH " + (huge + 1));
        LockEngine engine = engine(database);
        for (String name : List.of("small", "old", "new")) {
            assertThat(granted(engine, attempt(name, Duration.ofSeconds(30))))
                    .as("the first token of '%s' after the upgrade", name)
                    .isGreaterThan(huge);
        }
        assertThat(engine(database, "cerberus.createTable=false"))
                .as("the sequence is there now")
                .isNotNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "h2"})
    void theSweepRemovesTheRowsOfADeadHolderAndOfANameReleasedAgainWithinItsPeriod(String database) throws Exception {
        LockEngine engine = engine(database);
        Acquisition dead = attempt("dead", Duration.ofMillis(200));
        granted(engine, dead);
        Acquisition held = attempt("held", Duration.ofSeconds(60));
        granted(engine, held);
        for (int i = 0; i < 2; i++) {
            Acquisition released = attempt("released", Duration.ofSeconds(60));
            granted(engine, released);
            assertThat(engine.release(released)).isTrue();
        }
        assertThat(rows(database, "name = 'dead'")).isEqualTo(1);
        long expired = System.nanoTime() + Duration.ofMillis(200).toNanos();
        Poll.until(
                "the sweep to remove the dead holder's row and the released one",
                TestTimes.millis(ExpiredRows.PERIOD.toMillis() + 5000),
                () -> rowsQuietly(database, "name IN ('dead', 'released')") == 0);
        assertThat(Duration.ofNanos(System.nanoTime() - expired))
                .as("removed within a sweep period of its expiry")
                .isLessThan(ExpiredRows.PERIOD.plus(TestTimes.millis(3000)));
        assertThat(rows(database, "name = 'held'"))
                .as("a held lock's row stays")
                .isEqualTo(1);
    }

    /** More free rows than a pass deletes: the passes follow one another at once until none is left. */
    @Test
    void theSweepKeepsUpWithMoreFreedRowsThanAPassDeletes() throws Exception {
        engine("postgres"); // the table
        int freed = 2 * ExpiredRows.STATEMENTS_PER_PASS * SqlDialect.SWEPT_PER_STATEMENT + 1_000;
        try (Connection connection = DriverManager.getConnection(url("postgres"));
                PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table
                        + " (lock_key, namespace, name, fence, expires_at) SELECT 'k' || i, ?, 'n' || i, i, 0"
                        + " FROM generate_series(1, ?) AS i")) {
            insert.setString(1, namespace);
            insert.setInt(2, freed);
            assertThat(insert.executeUpdate()).isEqualTo(freed);
        }
        Poll.until(
                "the first pass",
                TestTimes.millis(ExpiredRows.PERIOD.toMillis() + 5000),
                () -> rowsQuietly("postgres", "name <> ''") < freed);
        long firstPass = System.nanoTime();
        Poll.until(
                "the sweep to remove " + freed + " free rows",
                TestTimes.millis(ExpiredRows.PERIOD.toMillis() * 3 + 5000),
                () -> rowsQuietly("postgres", "name <> ''") == 0);
        assertThat(Duration.ofNanos(System.nanoTime() - firstPass))
                .as("three passes in a row, not one a period")
                .isLessThan(ExpiredRows.PERIOD);
    }

    private static SqlDialect dialect(String database, String table) {
        return switch (database) {
            case "postgres" -> new PostgresDialect(table);
            case "mariadb" -> new MariaDbDialect(table);
            default -> new H2Dialect(table);
        };
    }

    private long rowsQuietly(String database, String where) {
        try {
            return rows(database, where);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return how many rows of this test's namespace in its table satisfy {@code where} */
    private long rows(String database, String where) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url(database));
                PreparedStatement statement = connection.prepareStatement(
                        "SELECT COUNT(*) FROM " + table + " WHERE namespace = ? AND " + where)) {
            statement.setString(1, namespace);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }
}
