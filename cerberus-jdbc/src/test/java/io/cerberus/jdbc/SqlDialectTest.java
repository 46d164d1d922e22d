package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * The statements each database is sent, pinned word for word: {@code statements.tsv} holds every
 * statement of the lock and idempotency tables and of PostgreSQL's session locks, for a plain and
 * a schema-qualified table. The benchmarks measured these texts, and the tests on real servers run
 * them; a change to one is deliberate and updates the file with it.
 */
class SqlDialectTest {
    private static final List<String> TABLES = List.of("cerberus_locks", "app.locks");

    @Test
    void aFenceSequenceNameFitsAnIdentifierForEveryAllowedTableName() {
        String longest = "t".repeat(63);
        assertThat(SqlDialect.sequenceFor("cerberus_locks")).isEqualTo("cerberus_locks_fence_seq");
        assertThat(SqlDialect.sequenceFor("app." + longest)).isEqualTo("app." + "t".repeat(53) + "_fence_seq");
        assertThat(SqlDialect.sequenceFor(longest).length()).isEqualTo(63);
        assertThat(JdbcTarget.checkTable(longest)).as("an allowed table name").isEqualTo(longest);
    }

    @Test
    void everyStatementIsTheOneRecorded() throws Exception {
        Map<String, String> recorded = recorded();
        Map<String, String> built = built();
        SoftAssertions softly = new SoftAssertions();
        softly.assertThat(built.keySet()).as("statements").containsExactlyElementsOf(recorded.keySet());
        for (Map.Entry<String, String> statement : recorded.entrySet()) {
            softly.assertThat(built.get(statement.getKey()))
                    .as(statement.getKey())
                    .isEqualTo(statement.getValue());
        }
        softly.assertAll();
    }

    @Test
    void theDatabaseIsKnownByItsProductName() {
        assertThat(SqlDialect.of("PostgreSQL", "jdbc:postgresql://h/db", "t")).isInstanceOf(PostgresDialect.class);
        assertThat(SqlDialect.of("MariaDB", "jdbc:mariadb://h/db", "t")).isInstanceOf(MariaDbDialect.class);
        assertThat(SqlDialect.of("MySQL", "jdbc:mysql://h/db", "t")).isInstanceOf(MariaDbDialect.class);
        assertThat(SqlDialect.of("H2", "jdbc:h2:mem:x", "t")).isInstanceOf(H2Dialect.class);
        assertThatThrownBy(() -> SqlDialect.of("Oracle", "jdbc:oracle:x", "t"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("jdbc:oracle:x is Oracle")
                .hasMessageContaining("PostgreSQL, MariaDB, MySQL and H2");
    }

    @Test
    void onlyPostgresqlAndMariaDbHandTheLockOverInTheRelease() {
        assertThat(new PostgresDialect("t").handOverRelease()).isPresent();
        assertThat(new MariaDbDialect("t").handOverRelease()).isPresent();
        assertThat(new H2Dialect("t").handOverRelease()).isEmpty();
    }

    @Test
    void eachDatabaseHasItsOwnSessionLocks() {
        Db db = db(new H2Dialect("t"));
        assertThat(new PostgresDialect("t").sessionLocks(db)).isInstanceOf(PostgresAdvisoryLocks.class);
        assertThat(new MariaDbDialect("t").sessionLocks(db)).isInstanceOf(MySqlNamedLocks.class);
        assertThat(new H2Dialect("t").sessionLocks(db)).isInstanceOf(RowLocks.class);
    }

    @Test
    void theNotificationChannelIsALowerCaseIdentifierOfAtMost63Characters() {
        assertThat(PostgresDialect.channel("App.Locks")).isEqualTo("cerberus_app_locks");
        assertThat(PostgresDialect.channel("a".repeat(80))).hasSize(63).startsWith("cerberus_aaa");
    }

    private static Map<String, String> recorded() throws IOException {
        Map<String, String> statements = new LinkedHashMap<>();
        try (InputStream in = SqlDialectTest.class.getResourceAsStream("statements.tsv")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                int tab = line.indexOf('\t');
                statements.put(line.substring(0, tab), line.substring(tab + 1));
            }
        }
        return statements;
    }

    /** @return the statements as the code builds them now, under the labels of {@code statements.tsv} */
    private static Map<String, String> built() throws ReflectiveOperationException {
        Map<String, String> built = new LinkedHashMap<>();
        for (String table : TABLES) {
            built.put("channel " + table, PostgresDialect.channel(table));
            PostgresDialect postgres = new PostgresDialect(table);
            MariaDbDialect mariaDb = new MariaDbDialect(table);
            H2Dialect h2 = new H2Dialect(table);

            String p = "PostgreSQL " + table + " ";
            built.put(p + "now", postgres.now);
            built.put(p + "createTable", postgres.createTable());
            built.put(p + "addWantedColumn", postgres.addWantedColumn());
            built.put(p + "probeTable", SqlDialect.probeTable(table));
            built.put(p + "acquire", postgres.acquireSql);
            built.put(p + "readRows3", postgres.readRows(3));
            built.put(p + "readRow", postgres.readRowSql);
            built.put(p + "readAfterRefusal", postgres.markWantedSql);
            built.put(p + "renew", postgres.renewSql);
            built.put(p + "release", postgres.notifyingReleaseSql);
            built.put(p + "free", postgres.notifyingFreeSql);
            built.put(p + "handOver", postgres.handOverSql);
            built.put(p + "raiseEpoch", postgres.raiseEpochSql);
            shared(built, p, postgres, table);

            String m = "MariaDB " + table + " ";
            built.put(m + "now", mariaDb.now);
            built.put(m + "createTable", mariaDb.createTable());
            built.put(m + "addWantedColumn", mariaDb.addWantedColumn());
            built.put(m + "probeTable", SqlDialect.probeTable(table));
            built.put(m + "acquire", mariaDb.acquireSql);
            built.put(m + "takeExisting", mariaDb.takeExistingSql);
            built.put(m + "drawFence", mariaDb.drawFenceSql);
            built.put(m + "readRows3", mariaDb.readRows(3));
            built.put(m + "readRow", mariaDb.readRowSql);
            built.put(m + "readAfterRefusal", mariaDb.readMarkSql);
            built.put(m + "markWanted", mariaDb.markWantedSql);
            built.put(m + "renew", mariaDb.renewSql);
            built.put(m + "renewMany3", mariaDb.renewManySql(3));
            built.put(m + "release", mariaDb.releaseSql);
            built.put(m + "free", mariaDb.freeSql);
            built.put(m + "handOver", mariaDb.handOverSql);
            built.put(m + "raiseEpoch", mariaDb.raiseEpochSql);
            shared(built, m, mariaDb, table);

            String h = "H2 " + table + " ";
            built.put(h + "now", h2.now);
            built.put(h + "createTable", h2.createTable());
            built.put(h + "probeTable", SqlDialect.probeTable(table));
            built.put(h + "acquire", h2.acquireSql);
            built.put(h + "drawFence", h2.drawFenceSql);
            built.put(h + "readRows3", h2.readRows(3));
            built.put(h + "readRow", h2.readRowSql);
            built.put(h + "readAfterRefusal", h2.readRowSql);
            built.put(h + "renew", h2.renewSql);
            built.put(h + "release", h2.releaseSql);
            built.put(h + "raiseEpoch", h2.raiseEpochSql);
            shared(built, h, h2, table);

            records(built, p, postgres, table);
            records(built, m, mariaDb, table);
            records(built, h, h2, table);
            built.put("PostgreSQL session release " + table, PostgresAdvisoryLocks.release(postgres.channel, false));
            built.put(
                    "PostgreSQL session releaseMarked " + table, PostgresAdvisoryLocks.release(postgres.channel, true));
        }
        built.put("PostgreSQL session tryOrMark", PostgresAdvisoryLocks.TRY_OR_MARK);
        built.put("PostgreSQL session releaseQuietly", PostgresAdvisoryLocks.RELEASE_QUIETLY);
        built.put("PostgreSQL session releaseQuietlyMarked", PostgresAdvisoryLocks.RELEASE_QUIETLY_MARKED);
        return built;
    }

    private static void shared(Map<String, String> built, String prefix, SqlDialect dialect, String table) {
        built.put(prefix + "isLocked", dialect.isLockedSql);
        built.put(prefix + "inspect", dialect.inspectSql);
        built.put(prefix + "readEpoch", dialect.readEpochSql);
        built.put(prefix + "forceRelease", dialect.forceReleaseSql);
        built.put(prefix + "nextFence", dialect.nextFence());
        built.put(prefix + "createFenceSequence", dialect.createFenceSequence(1));
        built.put(prefix + "expiredKeys", dialect.expiredKeysSql);
        built.put(prefix + "deleteExpired3", dialect.deleteExpiredSql(3));
        built.put(prefix + "idem createTable", dialect.createRecordTable(JdbcIdempotencyStore.tableFor(table)));
    }

    /** The idempotency store's statements, as built for {@code dialect} (the store keeps them in fields). */
    private static void records(Map<String, String> built, String prefix, SqlDialect dialect, String table)
            throws ReflectiveOperationException {
        JdbcIdempotencyStore store = new JdbcIdempotencyStore(db(dialect), table, false, false);
        for (String name : List.of(
                "claim",
                "read",
                "renew",
                "completeFor",
                "completeForever",
                "completeInFor",
                "completeInForever",
                "release",
                "purge")) {
            Field field = JdbcIdempotencyStore.class.getDeclaredField(name + "Sql");
            field.setAccessible(true);
            built.put(prefix + "records " + name, (String) field.get(store));
        }
    }

    /** @return a Db that never connects: building statements needs none */
    private static Db db(SqlDialect dialect) {
        JdbcTarget target = JdbcTarget.parse("jdbc:h2:mem:statements", JdbcOptions.defaults());
        return new Db(
                ConnectionSource.of(target, JdbcOptions.defaults(), Duration.ofSeconds(5)),
                dialect,
                Duration.ofSeconds(5));
    }
}
