package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.UnsafeEngineException;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.PgBouncerServer;
import io.cerberus.servers.PgBouncerServer.PoolMode;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.ClientProcess;
import io.cerberus.testkit.CountingEngineProvider;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The jdbc engine through a real PgBouncer in front of the shared PostgreSQL: what it finds at
 * start in each pool mode, the refusal of session mode through transaction pooling, and what
 * lease-row mode does there instead of listening. The conformance suite through PgBouncer is in
 * {@link JdbcPgBouncerConformanceTests}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JdbcPgBouncerTest {
    @RegisterExtension
    @Order(1)
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    @Order(2)
    static final ServerExtension<PgBouncerServer> TRANSACTION_POOLED =
            Databases.pgBouncer(POSTGRES, PoolMode.TRANSACTION);

    @RegisterExtension
    @Order(3)
    static final ServerExtension<PgBouncerServer> SESSION_POOLED = Databases.pgBouncer(POSTGRES, PoolMode.SESSION);

    @RegisterExtension
    @Order(4)
    static final ServerExtension<PgBouncerServer> STATEMENT_POOLED = Databases.pgBouncer(POSTGRES, PoolMode.STATEMENT);

    @Test
    void theProbeTellsADirectConnectionAndEachPoolModeApart() throws Exception {
        assertThat(probe(POSTGRES.uri())).isEqualTo(PgPooling.Finding.SESSIONS_LAST);
        assertThat(probe(SESSION_POOLED.uri())).isEqualTo(PgPooling.Finding.SESSIONS_LAST);
        assertThat(probe(TRANSACTION_POOLED.uri())).isEqualTo(PgPooling.Finding.TRANSACTION_POOLED);
        assertThat(probe(STATEMENT_POOLED.uri())).isEqualTo(PgPooling.Finding.STATEMENT_POOLED);
        try (PgBouncerServer roundRobin = PgBouncerServer.builder(POSTGRES.get())
                .poolMode(PoolMode.TRANSACTION)
                .setting("server_round_robin", "1")
                .start()) {
            assertThat(probe(roundRobin.uri()))
                    .as("lending the longest idle session first")
                    .isEqualTo(PgPooling.Finding.TRANSACTION_POOLED);
        }
    }

    @Test
    void sessionModeThroughTransactionPoolingIsRefusedAtStartWithTheWaysOut() {
        for (PgBouncerServer bouncer : List.of(TRANSACTION_POOLED.get(), STATEMENT_POOLED.get())) {
            String kind = bouncer.poolMode() == PoolMode.STATEMENT ? "statement" : "transaction";
            long clientsBefore = clientsOf(bouncer);
            assertThatThrownBy(() -> Cerberus.connect(Databases.with(bouncer.uri(), "cerberus.mode=session")))
                    .isInstanceOf(UnsafeEngineException.class)
                    .hasMessageStartingWith("session mode refused: jdbc:postgresql://" + bouncer.hostPort()
                            + "/postgres?user=cerberus&password=")
                    .hasMessageContaining("is " + kind + "-pooled (PgBouncer pool_mode=transaction or statement")
                    .hasMessageContaining("the lock would exclude nothing")
                    .hasMessageContaining("Use lease-row mode (the default: remove cerberus.mode=session)")
                    .hasMessageContaining("connect directly or through a pool with pool_mode=session")
                    .hasMessageNotContaining(POSTGRES.get().password());
            Poll.until(
                    "the refused engine's connections to " + bouncer + " to close",
                    TestTimes.millis(5000),
                    () -> clientsOf(bouncer) == clientsBefore);
        }
    }

    @Test
    void leaseRowThroughTransactionPoolingWarnsOnceAndWakesAWaiterOfAnotherProcessByItsBackoff() throws Exception {
        String uri = Databases.with(TRANSACTION_POOLED.uri(), "cerberus.table=pgb_backoff");
        String namespace = "pgb-" + UUID.randomUUID().toString().substring(0, 8);
        try (CapturedLogs logs = CapturedLogs.of("io.cerberus.jdbc", Level.WARNING);
                Cerberus waiting = Cerberus.builder()
                        .engine("counting:" + uri)
                        .namespace(namespace)
                        .build();
                ManagedProcess holder = ClientProcess.start(uri, namespace, Duration.ofSeconds(30))) {
            CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
            assertThat(logs.lines())
                    .singleElement()
                    .asString()
                    .startsWith("WARNING io.cerberus.jdbc.PostgresDialect: jdbc:postgresql://"
                            + TRANSACTION_POOLED.get().hostPort() + "/postgres?user=cerberus&password=")
                    .contains(
                            "is transaction-pooled",
                            "LISTEN cannot hear the releases of other processes",
                            "wake by their backoff")
                    .doesNotContain(POSTGRES.get().password());
            assertThat(waiting.checkEngine(waiting.currentEngine()))
                    .singleElement()
                    .asString()
                    .contains("is transaction-pooled");
            assertThat(listenerThreadOf("pgb_backoff"))
                    .as("no LISTEN through transaction pooling")
                    .isFalse();

            long wakeUp = wakeUpAfterRemoteRelease(waiting, engine, holder);
            assertThat(Duration.ofNanos(wakeUp))
                    .as("woken by the next ask of its backoff, half a ceiling of 1 s or more after the last")
                    .isGreaterThan(Duration.ofMillis(250))
                    .isLessThan(LeaseRowEngine.MAX_BACKOFF.plus(TestTimes.millis(700)));
            assertThat(logs.lines()).as("said once").hasSize(1);
        }
    }

    @Test
    void leaseRowThroughSessionPoolingListensAndAWaiterOfAnotherProcessWakesAtOnce() throws Exception {
        String uri = Databases.with(SESSION_POOLED.uri(), "cerberus.table=pgb_listen");
        String namespace = "pgb-" + UUID.randomUUID().toString().substring(0, 8);
        try (CapturedLogs logs = CapturedLogs.of("io.cerberus.jdbc", Level.WARNING);
                Cerberus waiting = Cerberus.builder()
                        .engine("counting:" + uri)
                        .namespace(namespace)
                        .build();
                ManagedProcess holder = ClientProcess.start(uri, namespace, Duration.ofSeconds(30))) {
            CountingEngineProvider.Counting engine = CountingEngineProvider.lastOpened();
            assertThat(listenerThreadOf("pgb_listen")).isTrue();
            long wakeUp = wakeUpAfterRemoteRelease(waiting, engine, holder);
            assertThat(Duration.ofNanos(wakeUp))
                    .as("woken by the release's notification, before its backoff's next ask")
                    .isLessThan(TestTimes.millis(300));
            assertThat(logs.lines()).isEmpty();
            assertThat(waiting.checkEngine(waiting.currentEngine())).isEmpty();
        }
    }

    @Test
    void theEnginesStatementsAreNotPreparedOnTheServerThroughTransactionPooling() throws Exception {
        String uri = TRANSACTION_POOLED.uri();
        assertThat(uri).doesNotContain("prepareThreshold");
        assertThatThrownBy(() -> preparedStatementsOnTwoConnections(uri))
                .as("the driver's own default, for the application's statements")
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("prepared statement \"S_");
        String namespace = "pgb-" + UUID.randomUUID().toString().substring(0, 8);
        try (Cerberus first =
                        Cerberus.builder().engine(uri).namespace(namespace).build();
                Cerberus second =
                        Cerberus.builder().engine(uri).namespace(namespace).build()) {
            DistributedLock one = first.lock("prepared");
            DistributedLock other = second.lock("prepared");
            for (int i = 0; i < 30; i++) {
                DistributedLock lock = i % 2 == 0 ? one : other;
                assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
                assertThat((i % 2 == 0 ? other : one).tryLock()).isFalse();
                lock.unlock();
            }
        }
    }

    @Test
    void throughTransactionPoolingStatementsAreTimedByTheDriverAndNoSessionSettingStaysBehind() throws Exception {
        PgBouncerServer bouncer = TRANSACTION_POOLED.get();
        String namespace = "pgb-" + UUID.randomUUID().toString().substring(0, 8);
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(bouncer.uri())
                        .namespace(namespace)
                        .connectTimeout(Duration.ofSeconds(1))
                        .build();
                Connection direct = DriverManager.getConnection(POSTGRES.uri())) {
            DistributedLock lock = cerberus.lock("blocked");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            // a transaction of someone else writes the lock's row (left free by the release, or inserted if swept
            // since), uncommitted: the acquire waits for it, until cancelled
            direct.setAutoCommit(false);
            try (PreparedStatement write = direct.prepareStatement(
                    "INSERT INTO cerberus_locks (lock_key, namespace, name, fence, expires_at) VALUES (?, ?, 'blocked', 0, 0)"
                            + " ON CONFLICT (lock_key) DO UPDATE SET wanted_until = 0")) {
                write.setString(1, LockRows.key("cerberus_locks", new io.cerberus.spi.LockKey(namespace, "blocked")));
                write.setString(2, namespace);
                assertThat(write.executeUpdate()).isOne();
            }
            long start = System.nanoTime();
            assertThatThrownBy(lock::tryLock).hasMessageContaining("acquiring exclusive 'blocked'");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(5000));
            direct.rollback();
            assertThat(lock.tryLock())
                    .as("the engine works on once the row is free")
                    .isTrue();
            lock.unlock();
        }
        assertThat(statementTimeoutsOfEveryServerSession(bouncer))
                .as("what the pooled sessions were left with")
                .isNotEmpty()
                .containsOnly("0");
    }

    /**
     * A child process takes a lock that a thread here then waits for; once the waiter's backoff has
     * grown to its ceiling, the child releases right after one of the waiter's asks.
     *
     * @return nanoseconds from the release to the waiter's grant
     */
    private static long wakeUpAfterRemoteRelease(
            Cerberus waiting, CountingEngineProvider.Counting engine, ManagedProcess holder)
            throws InterruptedException {
        ClientProcess.lock(holder, "exclusive", "wake");
        AtomicLong grantedAt = new AtomicLong();
        Thread waiter = new Thread(
                () -> {
                    DistributedLock lock = waiting.lock("wake");
                    try {
                        if (lock.tryLock(20, TimeUnit.SECONDS)) {
                            grantedAt.set(System.nanoTime());
                            lock.unlock();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "waiter");
        waiter.setDaemon(true);
        long asksBefore = engine.tryAcquires();
        waiter.start();
        try {
            // 20 ms doubling: the 7th ask is followed by a pause of 0.5 to 1 s
            Poll.until(
                    "the waiter's backoff to reach its ceiling",
                    TestTimes.millis(10_000),
                    () -> engine.tryAcquires() - asksBefore >= 7);
            long asked = engine.tryAcquires();
            Poll.until("the waiter's next ask", TestTimes.millis(5000), () -> engine.tryAcquires() > asked);
            Poll.untilWaiting(waiter, TestTimes.millis(5000));
            long releasedAt = System.nanoTime();
            assertThat(holder.ask("UNLOCK exclusive wake", TestTimes.millis(5000)))
                    .isEqualTo("UNLOCKED");
            waiter.join(TestTimes.millis(10_000).toMillis());
            assertThat(grantedAt.get()).as("the waiter was granted").isNotZero();
            return grantedAt.get() - releasedAt;
        } finally {
            waiter.interrupt();
        }
    }

    private static PgPooling.Finding probe(String uri) throws SQLException {
        JdbcTarget target = JdbcTarget.parse(uri, JdbcOptions.defaults());
        try (ConnectionSource source = ConnectionSource.of(target, JdbcOptions.defaults(), Duration.ofSeconds(10))) {
            Connection connection = source.borrow();
            try {
                return PgPooling.probe(connection, source);
            } finally {
                source.giveBack(connection, false);
            }
        }
    }

    private static boolean listenerThreadOf(String table) {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("cerberus-jdbc-listen-cerberus_" + table));
    }

    /** @return {@code SHOW statement_timeout} in each server session PgBouncer has open: each pinned by a transaction of its own */
    private static List<String> statementTimeoutsOfEveryServerSession(PgBouncerServer bouncer) throws SQLException {
        long sessions = bouncer.show("SERVERS").stream()
                .filter(row -> row.split("\\|")[2].equals("postgres"))
                .count();
        List<Connection> pinned = new java.util.ArrayList<>();
        List<String> timeouts = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < sessions; i++) {
                // prepareThreshold=0: the driver prepares nothing on the server, not even its BEGIN
                Connection connection = DriverManager.getConnection(bouncer.uri() + "&prepareThreshold=0");
                pinned.add(connection);
                connection.setAutoCommit(false);
                try (java.sql.Statement statement = connection.createStatement();
                        ResultSet rows = statement.executeQuery("SHOW statement_timeout")) {
                    rows.next();
                    timeouts.add(rows.getString(1));
                }
            }
        } finally {
            for (Connection connection : pinned) {
                connection.rollback();
                connection.close();
            }
        }
        return timeouts;
    }

    /** @return the clients PgBouncer serves on the database (its admin console's own connection aside) */
    private static long clientsOf(PgBouncerServer bouncer) {
        return bouncer.show("CLIENTS").stream()
                .filter(row -> row.split("\\|")[2].equals("postgres"))
                .count();
    }

    /** Two connections with the driver's defaults take turns preparing the same statements, each in its own transaction. */
    private static void preparedStatementsOnTwoConnections(String uri) throws SQLException {
        try (Connection one = DriverManager.getConnection(uri);
                Connection other = DriverManager.getConnection(uri)) {
            for (int i = 0; i < 10; i++) {
                for (Connection connection : List.of(one, other)) {
                    try (PreparedStatement statement = connection.prepareStatement("SELECT ?::int + 1")) {
                        statement.setInt(1, i);
                        try (ResultSet rows = statement.executeQuery()) {
                            rows.next();
                        }
                    }
                }
            }
        }
    }
}
