package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.fencing.FenceKeeper;
import io.cerberus.fencing.FencedRows;
import io.cerberus.fencing.StaleFenceException;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.ReadmeExamples;
import io.cerberus.testkit.ServerExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link FencedRows} against the real servers, their tables given the columns by the DDL of docs/FENCING.md: a
 * newer or equal fence writes and advances the row's fence, an older one is refused with the row left
 * as it was, a paused holder's late write is refused after the lock passed to another holder, a
 * fenced read refuses an older holder's later write, a missing row is told apart from a refusal, two
 * racing writers never lose the newer one's write, and racing holders that read then write lose no update.
 */
class FencedRowsDatabaseTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    @Nested
    class Postgres extends Cases {
        @Override
        String url() {
            return POSTGRES.uri();
        }

        @Override
        String database() {
            return "PostgreSQL";
        }
    }

    @Nested
    class MariaDb extends Cases {
        @Override
        String url() {
            return MARIADB.uri();
        }

        @Override
        String database() {
            return "MariaDB, MySQL";
        }
    }

    @Nested
    class H2Database extends Cases {
        @Override
        String url() {
            return H2.uri();
        }

        @Override
        String database() {
            return "H2";
        }
    }

    /** The cases, for a database and its DDL. */
    abstract static class Cases {
        private final String table = "accounts_" + UUID.randomUUID().toString().substring(0, 8);
        private final FencedRows rows = FencedRows.of(table, "id");
        private Connection connection;

        /** @return the database's URL, user and password included */
        abstract String url();

        /** @return the database's name in the DDL table of docs/FENCING.md */
        abstract String database();

        /** @return the statement docs/FENCING.md gives to add the fence columns, for this test's table */
        private String addFenceColumns() throws IOException {
            Path page = ReadmeExamples.readme().orElseThrow().resolveSibling("docs/FENCING.md");
            Matcher ddl = Pattern.compile(
                            "^\\| " + Pattern.quote(database()) + " \\| `(ALTER TABLE accounts [^`]*);` \\|$",
                            Pattern.MULTILINE)
                    .matcher(Files.readString(page));
            assertThat(ddl.find())
                    .as("the DDL of " + database() + " in " + page)
                    .isTrue();
            return ddl.group(1).replace("accounts", table);
        }

        @BeforeEach
        void createTable() throws SQLException, IOException {
            connection = DriverManager.getConnection(url());
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE " + table + " (id VARCHAR(40) PRIMARY KEY, balance BIGINT NOT NULL,"
                        + " writes BIGINT NOT NULL DEFAULT 0)");
                statement.execute(addFenceColumns());
                statement.execute("INSERT INTO " + table + " (id, balance) VALUES ('old', 10)");
            }
        }

        @AfterEach
        void dropTable() throws SQLException {
            try (Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE " + table);
            } finally {
                connection.close();
            }
        }

        @Test
        void aFenceKeeperAdmitsNewerFencesPerResourceAndRefusesAnOlderOne() throws SQLException {
            String fences = "fences_" + UUID.randomUUID().toString().substring(0, 8);
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE " + fences + " (resource VARCHAR(512) PRIMARY KEY,"
                        + " fence_epoch BIGINT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0)");
            }
            try {
                TestDataSource dataSource = new TestDataSource() {
                    @Override
                    public Connection getConnection() throws SQLException {
                        return DriverManager.getConnection(url());
                    }
                };
                FenceKeeper keeper = FencedRows.of(fences, "resource").keeper(dataSource);
                keeper.admit("ledger:42", new Fence(0, 5));
                keeper.admit("ledger:42", new Fence(0, 5));
                keeper.admit("ledger:42", new Fence(0, 7));
                keeper.admit("ledger:43", new Fence(0, 1));
                assertThatThrownBy(() -> keeper.admit("ledger:42", new Fence(0, 6)))
                        .isInstanceOf(StaleFenceException.class)
                        .satisfies(e ->
                                assertThat(((StaleFenceException) e).newest()).isEqualTo(new Fence(0, 7)));
                assertThat(FencedRows.of(fences, "resource").newestFence(connection, "ledger:42"))
                        .contains(new Fence(0, 7));
                assertThatThrownBy(() -> keeper.admit("", new Fence(0, 1)))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("1 to 512 characters");
            } finally {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("DROP TABLE " + fences);
                }
            }
        }

        @Test
        void aRowAddedBeforeTheColumnsStartsAtFenceZero() throws SQLException {
            assertThat(rows.newestFence(connection, "old")).contains(new Fence(0, 0));
            assertThat(rows.update(connection, new Fence(0, 1), "old", "balance = ?", 11))
                    .isTrue();
            assertThat(balance("old")).isEqualTo(11);
        }

        @Test
        void aNewerOrEqualFenceWritesAndAdvancesTheRowsFence() throws SQLException {
            rows.insert(connection, new Fence(0, 5), "a", "balance", 100);
            assertThat(rows.newestFence(connection, "a")).contains(new Fence(0, 5));

            assertThat(rows.update(connection, new Fence(0, 7), "a", "balance = balance + ?", 1))
                    .isTrue();
            assertThat(rows.update(connection, new Fence(0, 7), "a", "balance = balance + ?", 1))
                    .as("the same lease again")
                    .isTrue();
            assertThat(balance("a")).isEqualTo(102);
            assertThat(rows.newestFence(connection, "a")).contains(new Fence(0, 7));

            assertThat(rows.update(connection, new Fence(1, 2), "a", "balance = ?", 50))
                    .as("a later epoch, with a smaller token")
                    .isTrue();
            assertThat(rows.newestFence(connection, "a")).contains(new Fence(1, 2));
            assertThat(rows.delete(connection, new Fence(1, 2), "a")).isTrue();
            assertThat(rows.newestFence(connection, "a")).isEmpty();
        }

        @Test
        void anOlderFenceIsRefusedWithTheReasonAndTheRowUnchanged() throws SQLException {
            rows.insert(connection, new Fence(1, 7), "a", "balance", 100);
            for (Fence older : List.of(new Fence(1, 6), new Fence(0, 9))) {
                assertThatThrownBy(() -> rows.update(connection, older, "a", "balance = ?", 0))
                        .isInstanceOfSatisfying(StaleFenceException.class, stale -> {
                            assertThat(stale.refused()).isEqualTo(older);
                            assertThat(stale.newest()).isEqualTo(new Fence(1, 7));
                        })
                        .hasMessageContaining("refused by " + table + " id='a', which has seen fence 1:7");
                assertThatThrownBy(() -> rows.delete(connection, older, "a")).isInstanceOf(StaleFenceException.class);
                assertThatThrownBy(() -> rows.read(connection, older, "a", "balance", row -> row.getLong(1)))
                        .isInstanceOf(StaleFenceException.class);
            }
            assertThat(balance("a")).isEqualTo(100);
            assertThat(rows.newestFence(connection, "a")).contains(new Fence(1, 7));
        }

        @Test
        void aMissingRowIsReportedAsMissingNotAsARefusal() throws SQLException {
            Fence fence = new Fence(0, 3);
            assertThat(rows.update(connection, fence, "none", "balance = ?", 1)).isFalse();
            assertThat(rows.delete(connection, fence, "none")).isFalse();
            assertThat(rows.read(connection, fence, "none", "balance", row -> row.getLong(1)))
                    .isEmpty();
            assertThat(rows.newestFence(connection, "none")).isEmpty();
        }

        @Test
        void anInsertOfARowThatExistsFailsAsADuplicateKey() throws SQLException {
            rows.insert(connection, new Fence(0, 1), "a", "balance", 1);
            assertThatThrownBy(() -> rows.insert(connection, new Fence(0, 2), "a", "balance", 2))
                    .isInstanceOf(SQLException.class);
        }

        @Test
        void aLateWriteOfAPausedHolderIsRefused() throws Exception {
            String lockUri = "mem:fenced-" + table;
            try (Cerberus clientA = Cerberus.connect(lockUri);
                    Cerberus clientB = Cerberus.connect(lockUri)) {
                Lease leaseA = clientA.lock("account:old").acquire(Duration.ZERO, Duration.ofMillis(200));
                long readByA = rows.read(connection, Fence.of(leaseA), "old", "balance", row -> row.getLong(1))
                        .orElseThrow();

                // A pauses past its lease; B waits for the lock, gets it with a larger token, and writes
                try (Lease leaseB = clientB.lock("account:old").acquire(Duration.ofSeconds(10))) {
                    assertThat(leaseB.fencingToken()).isGreaterThan(leaseA.fencingToken());
                    long readByB = rows.read(connection, Fence.of(leaseB), "old", "balance", row -> row.getLong(1))
                            .orElseThrow();
                    assertThat(rows.update(connection, Fence.of(leaseB), "old", "balance = ?", readByB + 5))
                            .isTrue();
                }

                assertThat(leaseA.isValid()).isFalse();
                assertThatThrownBy(() -> rows.update(connection, Fence.of(leaseA), "old", "balance = ?", readByA + 1))
                        .isInstanceOf(StaleFenceException.class);
                assertThat(balance("old")).as("B's write, not A's").isEqualTo(15);
            }
        }

        @Test
        void aFencedReadRefusesTheLaterWriteOfAnOlderReader() throws SQLException {
            Fence older = new Fence(0, 1);
            Fence newer = new Fence(0, 2);
            long readByOlder = rows.read(connection, older, "old", "balance", row -> row.getLong(1))
                    .orElseThrow();
            long readByNewer = rows.read(connection, newer, "old", "balance", row -> row.getLong(1))
                    .orElseThrow();
            assertThat(rows.newestFence(connection, "old")).contains(newer);

            assertThatThrownBy(() -> rows.update(connection, older, "old", "balance = ?", readByOlder + 1))
                    .as("the older reader would overwrite what the newer one read")
                    .isInstanceOf(StaleFenceException.class);
            assertThat(rows.update(connection, newer, "old", "balance = ?", readByNewer + 2))
                    .isTrue();
            assertThat(balance("old")).isEqualTo(12);
        }

        @Test
        void aFencedReadInTheCallersTransactionIsUndoneWithIt() throws SQLException {
            connection.setAutoCommit(false);
            try {
                assertThat(rows.read(connection, new Fence(0, 4), "old", "balance", row -> row.getLong(1)))
                        .contains(10L);
                assertThat(rows.newestFence(connection, "old")).contains(new Fence(0, 4));
                connection.rollback();
                assertThat(rows.newestFence(connection, "old")).contains(new Fence(0, 0));
            } finally {
                connection.setAutoCommit(true);
            }
        }

        @Test
        void aFencedReadInAutoCommitModeCommitsTheAdvanceAndStaysInAutoCommit() throws SQLException {
            assertThat(rows.read(connection, new Fence(0, 4), "old", "id, balance", row -> row.getString(1)))
                    .contains("old");
            assertThat(connection.getAutoCommit()).isTrue();
            try (Connection other = DriverManager.getConnection(url())) {
                assertThat(rows.newestFence(other, "old")).contains(new Fence(0, 4));
            }
        }

        @Test
        void otherFenceColumnsAreUsedWhenNamed() throws SQLException {
            try (Statement statement = connection.createStatement()) {
                statement.execute("ALTER TABLE " + table + " ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0");
                statement.execute("ALTER TABLE " + table + " ADD COLUMN lease_token BIGINT NOT NULL DEFAULT 0");
            }
            FencedRows renamed = rows.withFenceColumns("lease_epoch", "lease_token");
            assertThat(renamed.update(connection, new Fence(0, 9), "old", "balance = ?", 1))
                    .isTrue();
            assertThat(renamed.newestFence(connection, "old")).contains(new Fence(0, 9));
            assertThat(rows.newestFence(connection, "old")).contains(new Fence(0, 0));
        }

        @Test
        void twoRacingWritersNeverLoseTheNewerOnesWrite() throws Exception {
            int writesEach = 60;
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService writers = Executors.newFixedThreadPool(2);
            try {
                List<Future<Integer>> applied = new ArrayList<>();
                for (int parity = 0; parity < 2; parity++) {
                    int first = parity + 1;
                    applied.add(writers.submit(() -> writeTokens(first, writesEach, start)));
                }
                start.countDown();
                int total = 0;
                for (Future<Integer> writer : applied) {
                    total += writer.get(60, TimeUnit.SECONDS);
                }
                long newest = 2L * writesEach;
                assertThat(rows.newestFence(connection, "old")).contains(new Fence(0, newest));
                assertThat(balance("old")).as("the newest writer's value").isEqualTo(newest);
                assertThat(writes("old")).as("each applied write counted once").isEqualTo(total);
            } finally {
                writers.shutdownNow();
            }
        }

        @Test
        void racingHoldersThatReadThenWriteLoseNoUpdate() throws Exception {
            int turnsEach = 300;
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService holders = Executors.newFixedThreadPool(2);
            try {
                List<Future<Integer>> increments = new ArrayList<>();
                for (int parity = 0; parity < 2; parity++) {
                    int first = parity + 1;
                    increments.add(holders.submit(() -> incrementWithTokens(first, turnsEach, start)));
                }
                start.countDown();
                int total = 0;
                for (Future<Integer> holder : increments) {
                    total += holder.get(60, TimeUnit.SECONDS);
                }
                assertThat(total).as("increments applied").isPositive();
                assertThat(balance("old"))
                        .as("10 and one for each increment applied")
                        .isEqualTo(10 + total);
            } finally {
                holders.shutdownNow();
            }
        }

        /**
         * Reads the balance and writes it back plus one, in auto-commit mode, for tokens first, first + 2, ...:
         * what a holder does between the read and the write is not protected by any transaction, only by the fence.
         */
        private int incrementWithTokens(int first, int count, CountDownLatch start) throws Exception {
            try (Connection own = DriverManager.getConnection(url())) {
                start.await();
                int applied = 0;
                for (int i = 0; i < count; i++) {
                    Fence fence = new Fence(0, first + 2L * i);
                    try {
                        long read = rows.read(own, fence, "old", "balance", row -> row.getLong(1))
                                .orElseThrow();
                        rows.update(own, fence, "old", "balance = ?", read + 1);
                        applied++;
                    } catch (StaleFenceException refused) {
                        assertThat(refused.newest()).isGreaterThan(fence);
                    }
                }
                return applied;
            }
        }

        /** Writes balance = token for tokens first, first + 2, ..., each in a transaction of its own. */
        private int writeTokens(int first, int count, CountDownLatch start) throws Exception {
            try (Connection own = DriverManager.getConnection(url())) {
                own.setAutoCommit(false);
                start.await();
                int applied = 0;
                for (int i = 0; i < count; i++) {
                    long token = first + 2L * i;
                    try {
                        rows.update(own, new Fence(0, token), "old", "balance = ?, writes = writes + 1", token);
                        applied++;
                    } catch (StaleFenceException refused) {
                        assertThat(refused.newest().token()).isGreaterThan(token);
                    }
                    own.commit();
                }
                return applied;
            }
        }

        private long balance(String id) throws SQLException {
            return column(id, "balance");
        }

        private long writes(String id) throws SQLException {
            return column(id, "writes");
        }

        private long column(String id, String column) throws SQLException {
            try (PreparedStatement select =
                    connection.prepareStatement("SELECT " + column + " FROM " + table + " WHERE id = ?")) {
                select.setString(1, id);
                try (ResultSet row = select.executeQuery()) {
                    assertThat(row.next()).as("row " + id).isTrue();
                    return row.getLong(1);
                }
            }
        }
    }
}
