package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyCompletionException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.idempotency.Outcome;
import io.cerberus.idempotency.ReplayedFailureException;
import io.cerberus.idempotency.ResultCodec;
import io.cerberus.idempotency.ResultNotKeptException;
import io.cerberus.idempotency.TransactionalOperation;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.ServerExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The idempotency record written in the caller's transaction, against the real databases: the result
 * commits with the effect or not at all; a claim is seen by a duplicate at once; a failure or a rollback
 * frees the key at once; a completion refused (the key taken over) rolls the effect back; a transaction
 * that outlives its lease after writing the result keeps duplicates waiting until it ends, then they
 * replay (commit) or run (rollback); a dropped connection leaves the key to a retry after the lease.
 */
class IdempotencyInTransactionTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration LEASE = Duration.ofMillis(600);

    @Nested
    class Postgres extends Cases {
        @Override
        String url() {
            return POSTGRES.uri();
        }

        @Test
        void aSnapshotTakenBeforeTheClaimCannotCompleteAndSaysSo() throws Exception {
            try (Connection connection = connect()) {
                connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                connection.setAutoCommit(false);
                count(connection); // the snapshot is taken here, before the claim
                try (IdempotencyAttempt<String> attempt = guard.begin(key("early"), DAY, ResultCodec.STRING)) {
                    insertEffect(connection, "early");
                    assertThatThrownBy(() -> attempt.completeIn(connection, "done"))
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("snapshot was taken before the claim");
                    connection.rollback();
                    attempt.rolledBack();
                }
            }
            assertThat(guard.execute(key("early"), DAY, () -> "again").status())
                    .as("the key was freed at the rollback")
                    .isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Nested
    class MariaDb extends Cases {
        @Override
        String url() {
            return MARIADB.uri();
        }
    }

    @Nested
    class H2Database extends Cases {
        @Override
        String url() {
            return H2.uri();
        }
    }

    /** The cases, for a database. */
    abstract static class Cases {
        private final String effects = "effects_" + UUID.randomUUID().toString().substring(0, 8);
        private final String locks = "locks_" + UUID.randomUUID().toString().substring(0, 8);
        private Cerberus cerberus;
        IdempotencyGuard guard;
        private TestDataSource dataSource;

        /** @return the database's URL, user and password included */
        abstract String url();

        Connection connect() throws SQLException {
            return DriverManager.getConnection(url());
        }

        @BeforeEach
        void start() throws SQLException {
            try (Connection connection = connect();
                    Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE " + effects + " (op VARCHAR(40) NOT NULL)");
            }
            dataSource = new TestDataSource() {
                @Override
                public Connection getConnection() throws SQLException {
                    return connect();
                }
            };
            cerberus = Cerberus.builder()
                    .engine(Databases.with(url(), "cerberus.table=" + locks))
                    .build();
            guard = cerberus.idempotency(
                    IdempotencyOptions.defaults().withLease(LEASE).rejectingWhenInProgress());
        }

        @AfterEach
        void stop() throws SQLException {
            cerberus.close();
            try (Connection connection = connect();
                    Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE " + effects);
                statement.execute("DROP TABLE " + locks + "_idem");
            }
        }

        IdempotencyKey key(String name) {
            return IdempotencyKey.of("charge", name, name);
        }

        void insertEffect(Connection connection, String op) throws SQLException {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + effects + " VALUES (?)")) {
                insert.setString(1, op);
                insert.executeUpdate();
            }
        }

        long count(Connection connection) throws SQLException {
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM " + effects)) {
                rows.next();
                return rows.getLong(1);
            }
        }

        long effects() throws SQLException {
            try (Connection connection = connect()) {
                return count(connection);
            }
        }

        /** @return an operation that inserts its effect and returns a receipt numbered by its runs */
        TransactionalOperation<String> operation(AtomicInteger runs) {
            return connection -> {
                insertEffect(connection, "op");
                return "receipt-" + runs.incrementAndGet();
            };
        }

        @Test
        void theResultCommitsWithTheEffectAndADuplicateReplaysIt() throws Exception {
            AtomicInteger runs = new AtomicInteger();
            TransactionalOperation<String> operation = operation(runs);

            Outcome<String> first =
                    guard.executeInTransaction(key("a"), DAY, ResultCodec.STRING, dataSource, operation);
            Outcome<String> second =
                    guard.executeInTransaction(key("a"), DAY, ResultCodec.STRING, dataSource, operation);

            assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(second.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(second.value()).isEqualTo(first.value()).isEqualTo("receipt-1");
            assertThat(runs).hasValue(1);
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aFailureRollsTheEffectBackAndFreesTheKeyAtOnce() throws Exception {
            assertThatThrownBy(() -> guard.executeInTransaction(key("b"), DAY, ResultCodec.STRING, dataSource, c -> {
                        insertEffect(c, "b");
                        throw new IllegalStateException("declined");
                    }))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("declined");
            assertThat(effects()).isZero();

            Outcome<String> retry = guard.executeInTransaction(
                    key("b"), DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger()));
            assertThat(retry.status())
                    .as("run again at once, not after the lease (the guard rejects a key in progress)")
                    .isEqualTo(Outcome.Status.EXECUTED);
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aDuplicateSeesTheClaimWhileTheFirstTransactionRuns() throws Exception {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            CompletableFuture<Outcome<String>> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return guard.executeInTransaction(key("c"), DAY, ResultCodec.STRING, dataSource, c -> {
                        insertEffect(c, "c");
                        running.countDown();
                        finish.await(30, TimeUnit.SECONDS);
                        return "first";
                    });
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();

            assertThatThrownBy(() ->
                            guard.executeInTransaction(key("c"), DAY, ResultCodec.STRING, dataSource, c -> "second"))
                    .isInstanceOf(OperationInProgressException.class);
            finish.countDown();

            assertThat(first.get(30, TimeUnit.SECONDS).value()).isEqualTo("first");
            assertThat(guard.executeInTransaction(key("c"), DAY, ResultCodec.STRING, dataSource, c -> "third")
                            .value())
                    .isEqualTo("first");
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aRolledBackCompletionLeavesNoRecordAndTheRetryRunsOnce() throws Exception {
            try (Connection connection = connect();
                    IdempotencyAttempt<String> attempt = guard.begin(key("d"), DAY, ResultCodec.STRING)) {
                connection.setAutoCommit(false);
                insertEffect(connection, "d");
                attempt.completeIn(connection, "lost");
                connection.rollback(); // as if the process died before its commit
                attempt.rolledBack();
            }
            assertThat(effects()).isZero();

            Outcome<String> retry = guard.executeInTransaction(
                    key("d"), DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger()));
            assertThat(retry.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(retry.value()).isEqualTo("receipt-1");
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aFailureStoredInTheTransactionCommitsWithTheEffectAndIsReplayed() throws Exception {
            try (Connection connection = connect();
                    IdempotencyAttempt<String> attempt = guard.begin(key("f"), DAY, ResultCodec.STRING)) {
                connection.setAutoCommit(false);
                insertEffect(connection, "f");
                attempt.failIn(connection, new IllegalStateException("partner declined after the booking"));
                connection.commit();
            }
            assertThat(effects()).isEqualTo(1);

            assertThatThrownBy(() -> guard.executeInTransaction(
                            key("f"), DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger())))
                    .isInstanceOf(ReplayedFailureException.class)
                    .hasMessageContaining("partner declined after the booking");
            assertThat(effects()).as("not run again").isEqualTo(1);
        }

        @Test
        void aFailureStoredInATransactionThatRollsBackLeavesTheKeyFree() throws Exception {
            try (Connection connection = connect();
                    IdempotencyAttempt<String> attempt = guard.begin(key("g"), DAY, ResultCodec.STRING)) {
                connection.setAutoCommit(false);
                insertEffect(connection, "g");
                attempt.failIn(connection, new IllegalStateException("declined"));
                connection.rollback();
                attempt.rolledBack();
            }
            Outcome<String> retry = guard.executeInTransaction(
                    key("g"), DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger()));
            assertThat(retry.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aResultNotKeptIsRecordedInTheTransactionAndDuplicatesDoNotRunAgain() throws Exception {
            try (Connection connection = connect();
                    IdempotencyAttempt<String> attempt = guard.begin(key("h"), DAY, ResultCodec.STRING)) {
                connection.setAutoCommit(false);
                insertEffect(connection, "h");
                attempt.completeNotKeptIn(connection, "the export was streamed");
                connection.commit();
            }
            assertThatThrownBy(() -> guard.executeInTransaction(
                            key("h"), DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger())))
                    .isInstanceOf(ResultNotKeptException.class)
                    .hasMessageContaining("the export was streamed");
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aConnectionDroppedBeforeTheCommitLeavesTheKeyToARetryAfterTheLease() throws Exception {
            try (Connection connection = connect()) {
                IdempotencyAttempt<String> attempt = guard.begin(key("e"), DAY, ResultCodec.STRING);
                connection.setAutoCommit(false);
                insertEffect(connection, "e");
                attempt.completeIn(connection, "never committed");
            } // the process died: nobody calls rolledBack, the lease runs out

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Outcome<String> retry = null;
            while (retry == null) {
                try {
                    retry = guard.executeInTransaction(
                            key("e"), DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger()));
                } catch (OperationInProgressException inProgress) {
                    assertThat(System.nanoTime())
                            .as("the key is free after the lease")
                            .isLessThan(deadline);
                    Thread.sleep(50);
                }
            }
            assertThat(retry.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(effects()).isEqualTo(1);
        }

        @Test
        void aKeyTakenOverBeforeTheCompletionRollsTheEffectBack() throws Exception {
            assertThatThrownBy(() -> guard.executeInTransaction(key("f"), DAY, ResultCodec.STRING, dataSource, c -> {
                        insertEffect(c, "f");
                        takeOver(key("f"));
                        return "late";
                    }))
                    .isInstanceOf(IdempotencyCompletionException.class)
                    .hasMessageContaining("another attempt took the key");
            assertThat(effects()).isZero();
        }

        /** Gives the record of {@code key} to another token, as a duplicate does once the lease has run out. */
        private void takeOver(IdempotencyKey key) throws SQLException {
            try (Connection connection = connect();
                    PreparedStatement update =
                            connection.prepareStatement("UPDATE " + locks + "_idem SET token = 'other'")) {
                assertThat(update.executeUpdate()).isEqualTo(1);
            }
        }

        @Test
        void aTransactionThatOutlivesItsLeaseKeepsDuplicatesWaitingUntilItEnds() throws Exception {
            for (boolean commit : new boolean[] {true, false}) {
                IdempotencyKey key = key("g" + commit);
                try (Connection connection = connect()) {
                    outliveTheLease(key, connection, commit);
                }
            }
            assertThat(effects()).isEqualTo(2);
        }

        private void outliveTheLease(IdempotencyKey key, Connection connection, boolean commit) throws Exception {
            IdempotencyAttempt<String> attempt = guard.begin(key, DAY, ResultCodec.STRING);
            connection.setAutoCommit(false);
            insertEffect(connection, "slow");
            attempt.completeIn(connection, "slow");
            awaitExpiry();

            CompletableFuture<Outcome<String>> duplicate = CompletableFuture.supplyAsync(() -> {
                try {
                    return guard.executeInTransaction(
                            key, DAY, ResultCodec.STRING, dataSource, operation(new AtomicInteger()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThatThrownBy(() -> duplicate.get(300, TimeUnit.MILLISECONDS))
                    .as("the duplicate's claim waits for the row the transaction wrote")
                    .isInstanceOf(TimeoutException.class);
            if (commit) {
                connection.commit();
            } else {
                connection.rollback();
            }
            if (!commit) {
                attempt.rolledBack();
            }
            Outcome<String> answer = duplicate.get(30, TimeUnit.SECONDS);
            assertThat(answer.status())
                    .as("commit: replayed; rollback: run")
                    .isEqualTo(commit ? Outcome.Status.REPLAYED : Outcome.Status.EXECUTED);
        }

        /** Polls until the claims of this test's table have run out by the database's clock. */
        private void awaitExpiry() throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try (Connection connection = connect();
                        Statement statement = connection.createStatement();
                        ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM " + locks + "_idem WHERE "
                                + "completed = 0 AND expires_at > " + dialectNow(connection))) {
                    rows.next();
                    if (rows.getLong(1) == 0) {
                        return;
                    }
                }
                assertThat(System.nanoTime()).as("the lease runs out").isLessThan(deadline);
                Thread.sleep(50);
            }
        }

        private String dialectNow(Connection connection) throws SQLException {
            return SqlDialect.of(connection.getMetaData().getDatabaseProductName(), "test", locks).now;
        }
    }
}
