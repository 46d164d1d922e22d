package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.RenewsInBatches;
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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/** The jdbc engine's own cases, on real PostgreSQL, MariaDB and H2. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JdbcEngineTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    private final List<Cerberus> clients = new ArrayList<>();
    private final String namespace = "engine-" + UUID.randomUUID().toString().substring(0, 8);

    private Cerberus client(String uri) {
        Cerberus cerberus = Cerberus.builder().engine(uri).namespace(namespace).build();
        clients.add(cerberus);
        return cerberus;
    }

    @AfterEach
    void close() {
        clients.forEach(Cerberus::close);
    }

    @Test
    void restartedDatabaseKeepsLeaseRowsAndSignalsLostSessions() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            Cerberus rows = Cerberus.builder()
                    .engine(server.uri())
                    .namespace(namespace)
                    .defaultLease(Duration.ofSeconds(6))
                    .build();
            clients.add(rows);
            Cerberus sessions =
                    client(Databases.with(server.uri(), "cerberus.mode=session&cerberus.sessionCheckMs=200"));
            DistributedLock row = rows.lock("row");
            row.lock();
            long fence = row.lease().fencingToken();
            DistributedLock idle = sessions.lock("idle");
            idle.lock();
            idle.unlock();
            DistributedLock session = sessions.lock("session");
            session.lock();
            CountDownLatch sessionLost = new CountDownLatch(1);
            session.lease().onLost((lease, reason) -> sessionLost.countDown());

            server.restart();

            assertThat(sessionLost.await(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the session-mode holder is told its lock is gone")
                    .isTrue();
            assertThat(session.lease().isValid()).isFalse();
            DistributedLock again = sessions.lock("again");
            assertThat(again.tryLock())
                    .as("a session connection left idle across the restart is replaced")
                    .isTrue();
            again.unlock();
            // two lease periods after the restart the lease-row hold still stands, renewed on new connections
            long until = System.nanoTime() + Duration.ofSeconds(12).toNanos();
            Poll.until("two lease periods", TestTimes.millis(30_000), () -> System.nanoTime() - until > 0);
            assertThat(row.lease().isValid())
                    .as("the lease-row hold survived the restart")
                    .isTrue();
            Cerberus other = client(server.uri());
            assertThat(other.lock("row").tryLock())
                    .as("nobody else can take it")
                    .isFalse();
            assertThat(other.lock("session").tryLock())
                    .as("the lost session lock is free")
                    .isTrue();
            row.unlock();
            DistributedLock next = other.lock("row");
            assertThat(next.tryLock()).isTrue();
            assertThat(next.lease().fencingToken()).isGreaterThan(fence);
            next.unlock();
            other.lock("session").unlock();
        }
    }

    /** @return every database in both modes: the engines whose async waiters are woken by {@link Wakeups} */
    private List<String> everyEngine() {
        List<String> uris = new ArrayList<>();
        for (String url : List.of(POSTGRES.uri(), MARIADB.uri(), H2.uri())) {
            uris.add(url);
            uris.add(Databases.with(url, "cerberus.mode=session"));
        }
        return uris;
    }

    private Acquisition attempt(String name) {
        return new Acquisition(
                new LockKey(namespace, name),
                LockMode.EXCLUSIVE,
                UUID.randomUUID().toString().replace("-", ""),
                "test",
                Duration.ofSeconds(30));
    }

    private static int changeCallbacks(LockEngine engine, LockKey lock) {
        return engine instanceof SessionEngine session
                ? session.changeCallbacks(lock)
                : ((LeaseRowEngine) engine).changeCallbacks(lock);
    }

    @Test
    void aReleaseByAnotherClientCallsAnAsyncWaitersCallbackOnce() throws Exception {
        for (String uri : everyEngine()) {
            try (LockEngine holderEngine = Engines.open(uri, Duration.ofSeconds(5));
                    LockEngine engine = Engines.open(uri, Duration.ofSeconds(5))) {
                Acquisition holder = attempt("notify");
                assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
                Acquisition waiter = attempt("notify");
                assertThat(engine.tryAcquire(waiter)).as(uri).isInstanceOf(AcquireResult.Busy.class);
                AtomicInteger calls = new AtomicInteger();
                CountDownLatch woken = new CountDownLatch(1);
                NotifiesChanges.ChangeWatch watch = engine.ability(NotifiesChanges.class)
                        .orElseThrow()
                        .onChange(waiter, () -> {
                            calls.incrementAndGet();
                            woken.countDown();
                        });
                assertThat(changeCallbacks(engine, waiter.key())).as(uri).isEqualTo(1);

                assertThat(holderEngine.release(holder)).isTrue();
                assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                        .as("woken by the release on %s", uri)
                        .isTrue();
                Acquisition next = attempt("notify");
                assertThat(holderEngine.tryAcquire(next)).isInstanceOf(AcquireResult.Granted.class);
                assertThat(holderEngine.release(next)).isTrue(); // signals this JVM's waiters before it returns
                watch.cancel();
                assertThat(calls)
                        .as("calls of one registration after two releases, on %s", uri)
                        .hasValue(1);
                assertThat(changeCallbacks(engine, waiter.key())).as(uri).isZero();
                engine.abandon(waiter);
            }
        }
    }

    @Test
    void cancelledAsyncWaitsLeaveNoCallbackBehind() throws Exception {
        for (String uri : everyEngine()) {
            try (LockEngine holderEngine = Engines.open(uri, Duration.ofSeconds(5));
                    LockEngine engine = Engines.open(uri, Duration.ofSeconds(5))) {
                Acquisition holder = attempt("notify-cancel");
                assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
                Acquisition waiter = attempt("notify-cancel");
                assertThat(engine.tryAcquire(waiter)).as(uri).isInstanceOf(AcquireResult.Busy.class);
                NotifiesChanges notifies = engine.ability(NotifiesChanges.class).orElseThrow();
                AtomicInteger cancelledCalls = new AtomicInteger();
                for (int i = 0; i < 1000; i++) {
                    notifies.onChange(waiter, cancelledCalls::incrementAndGet).cancel();
                }
                assertThat(changeCallbacks(engine, waiter.key()))
                        .as("callbacks left by 1,000 cancelled waits on %s", uri)
                        .isZero();

                CountDownLatch woken = new CountDownLatch(1);
                notifies.onChange(waiter, woken::countDown);
                assertThat(holderEngine.release(holder)).isTrue();
                assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                        .as("a live callback woken by the release on %s", uri)
                        .isTrue();
                assertThat(cancelledCalls)
                        .as("cancelled callbacks called on %s", uri)
                        .hasValue(0);
                engine.abandon(waiter);
            }
        }
    }

    @Test
    void sessionDroppedByTheServerIsReportedLost() throws Exception {
        for (String url : List.of(POSTGRES.uri(), MARIADB.uri())) {
            Cerberus cerberus = client(Databases.with(url, "cerberus.mode=session&cerberus.sessionCheckMs=200"));
            DistributedLock lock = cerberus.lock("dropped");
            lock.lock();
            CountDownLatch lost = new CountDownLatch(1);
            lock.lease().onLost((lease, reason) -> lost.countDown());
            try (Connection admin = DriverManager.getConnection(url);
                    Statement statement = admin.createStatement()) {
                if (url.startsWith("jdbc:postgresql")) {
                    statement.execute(
                            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                                    + "AND pid <> pg_backend_pid()");
                } else {
                    String name = LockRows.sessionLockName("cerberus_locks", new LockKey(namespace, "dropped"));
                    try (ResultSet rows = statement.executeQuery("SELECT IS_USED_LOCK('" + name + "')")) {
                        assertThat(rows.next()).isTrue();
                        statement.execute("KILL " + rows.getLong(1));
                    }
                }
            }
            assertThat(lost.await(TestTimes.millis(5_000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("a session killed on %s is reported lost within the check interval", url)
                    .isTrue();
            assertThat(client(url + (url.contains("?") ? "&" : "?") + "cerberus.mode=session")
                            .lock("dropped")
                            .tryLock())
                    .isTrue();
            assertThatThrownBy(lock::unlock).hasMessageContaining("lost");
        }
    }

    @Test
    void sessionModeServesTheNextHoldOnTheSameConnection() throws Exception {
        for (String url : List.of(POSTGRES.uri(), MARIADB.uri())) {
            Cerberus cerberus = client(Databases.with(url, "cerberus.mode=session"));
            LockKey key = new LockKey(namespace, "reused");
            Set<Long> sessions = new HashSet<>();
            for (int i = 0; i < 10; i++) {
                DistributedLock lock = cerberus.lock("reused");
                lock.lock();
                sessions.add(sessionHolding(url, key));
                lock.unlock();
            }
            assertThat(sessions)
                    .as("one database session served every hold on %s", url)
                    .hasSize(1);
        }
    }

    /** @return the id of the database session that holds the session lock of {@code key} */
    private static long sessionHolding(String url, LockKey key) throws SQLException {
        try (Connection admin = DriverManager.getConnection(url)) {
            PreparedStatement statement;
            if (url.startsWith("jdbc:postgresql")) {
                long advisory = LockRows.advisoryKey("cerberus_locks", key);
                statement = admin.prepareStatement(
                        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
                                + "AND classid = CAST(? AS bigint)::oid AND objid = CAST(? AS bigint)::oid");
                statement.setLong(1, advisory >>> 32);
                statement.setLong(2, advisory & 0xffffffffL);
            } else {
                statement = admin.prepareStatement("SELECT IS_USED_LOCK(?)");
                statement.setString(1, LockRows.sessionLockName("cerberus_locks", key));
            }
            try (statement;
                    ResultSet rows = statement.executeQuery()) {
                assertThat(rows.next()).as("someone holds %s on %s", key, url).isTrue();
                return rows.getLong(1);
            }
        }
    }

    @Test
    void sessionLocksAreFreedWhenAnApplicationPoolKeepsTheSessionOpen() throws Exception {
        for (String url : List.of(POSTGRES.uri(), MARIADB.uri(), H2.uri())) {
            JdbcLocalLinesTest.Target target = new JdbcLocalLinesTest.Target(url, url, JdbcOptions.Mode.SESSION);
            try (JdbcLocalLinesTest.CountingDataSource pool = new JdbcLocalLinesTest.CountingDataSource(target, true)) {
                LockKey key = new LockKey(namespace, "pooled");
                JdbcOptions options = JdbcOptions.dataSource(pool).mode(JdbcOptions.Mode.SESSION);
                // the engine closed while it holds: no client releases first
                try (LockEngine engine = new JdbcEngineProvider()
                        .open(new EngineContext(
                                url, Duration.ofSeconds(10), (token, reason) -> {}, List.of(options)))) {
                    Acquisition attempt = new Acquisition(
                            key,
                            LockMode.EXCLUSIVE,
                            UUID.randomUUID().toString().replace("-", ""),
                            "test",
                            Duration.ofSeconds(30));
                    assertThat(engine.tryAcquire(attempt)).isInstanceOf(AcquireResult.Granted.class);
                }
                DistributedLock other =
                        client(Databases.with(url, "cerberus.mode=session")).lock("pooled");
                assertThat(other.tryLock())
                        .as("closing the engine freed its lock on %s, though the pool keeps its connection open", url)
                        .isTrue();
                other.unlock();
            }
        }
    }

    @Test
    void sessionModeReleaseNotifiesOnlyWhenAWaiterOfAnotherSessionMarkedTheLock() throws Exception {
        String url = Databases.with(POSTGRES.uri(), "cerberus.mode=session");
        DistributedLock lock = client(url).lock("wanted");
        Cerberus other = client(url);
        String key = LockRows.key("cerberus_locks", new LockKey(namespace, "wanted"));
        try (Connection listening = DriverManager.getConnection(POSTGRES.uri())) {
            try (Statement statement = listening.createStatement()) {
                statement.execute("LISTEN " + PostgresDialect.channel("cerberus_locks"));
            }
            org.postgresql.PGConnection pg = listening.unwrap(org.postgresql.PGConnection.class);
            for (int i = 0; i < 3; i++) {
                lock.lock();
                lock.unlock();
            }
            lock.lock();
            assertThat(other.lock("wanted").tryLock())
                    .as("refused, and not waiting")
                    .isFalse();
            lock.unlock();
            assertThat(notifiedKeys(pg, 300))
                    .as("nobody waited: no notification")
                    .doesNotContain(key);

            lock.lock();
            CountDownLatch acquired = new CountDownLatch(1);
            CountDownLatch releaseNow = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                DistributedLock wanting = other.lock("wanted");
                try {
                    if (wanting.tryLock(20, TimeUnit.SECONDS)) {
                        acquired.countDown();
                        releaseNow.await();
                        wanting.unlock();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            waiter.start();
            Poll.untilWaiting(waiter, TestTimes.millis(5000));
            lock.unlock();
            assertThat(firstNotified(pg, key, 5000))
                    .as("the release notifies the waiter's key")
                    .isTrue();
            assertThat(acquired.await(TestTimes.millis(5000).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            releaseNow.countDown();
            waiter.join(TestTimes.millis(5000).toMillis());
            assertThat(waiter.isAlive()).isFalse();
            assertThat(notifiedKeys(pg, 300))
                    .as("the former waiter's release: nobody waits")
                    .doesNotContain(key);
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void sessionModeWakesAnotherProcessOnlyAtTheEndOfATurn() throws Exception {
        String url = Databases.with(POSTGRES.uri(), "cerberus.mode=session");
        DistributedLock lock = client(url).lock("turns");
        LockKey lockKey = new LockKey(namespace, "turns");
        long advisory = LockRows.advisoryKey("cerberus_locks", lockKey);
        String key = LockRows.key("cerberus_locks", lockKey);
        try (Connection listening = DriverManager.getConnection(POSTGRES.uri());
                Connection elsewhere = DriverManager.getConnection(POSTGRES.uri())) {
            try (Statement statement = listening.createStatement()) {
                statement.execute("LISTEN " + PostgresDialect.channel("cerberus_locks"));
            }
            // a waiter of another process: it holds the key's wanted mark, as a refused try leaves it
            try (Statement statement = elsewhere.createStatement()) {
                statement.execute(
                        "SELECT pg_advisory_lock_shared(" + (int) (advisory >>> 32) + ", " + (int) advisory + ")");
            }
            AtomicInteger cycles = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                Thread thread = new Thread(
                        () -> {
                            try {
                                while (done.getCount() > 0) {
                                    if (lock.tryLock(20, TimeUnit.SECONDS)) {
                                        cycles.incrementAndGet();
                                        lock.unlock();
                                    }
                                }
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        "cycling-" + t);
                thread.start();
                threads.add(thread);
            }
            org.postgresql.PGConnection pg = listening.unwrap(org.postgresql.PGConnection.class);
            Poll.until(
                    "the threads here to take the lock in turn", TestTimes.millis(20_000), () -> cycles.get() >= 300);
            done.countDown();
            for (Thread thread : threads) {
                thread.join(TestTimes.millis(20_000).toMillis());
                assertThat(thread.isAlive()).isFalse();
            }
            long notified = notifiedKeys(pg, 300).stream().filter(key::equals).count();
            assertThat(notified)
                    .as("the other process is woken at the end of each turn")
                    .isPositive();
            assertThat(notified)
                    .as(
                            "but not at every one of %d releases: a release leaves the lock to the next thread here",
                            cycles.get())
                    .isLessThan(cycles.get() / 4);
        }
    }

    @Test
    void sessionModeNotificationWakesAWaiterOfAnotherProcess() throws Exception {
        String url = POSTGRES.uri();
        DistributedLock lock =
                client(Databases.with(url, "cerberus.mode=session")).lock("notified");
        LockKey lockKey = new LockKey(namespace, "notified");
        long advisory = LockRows.advisoryKey("cerberus_locks", lockKey);
        try (Connection other = DriverManager.getConnection(url)) {
            // another process holds the lock
            try (Statement statement = other.createStatement()) {
                statement.execute("SELECT pg_advisory_lock(" + advisory + ")");
            }
            AtomicLong acquiredAt = new AtomicLong();
            Thread waiter = waiterWithGrownBackoff(lock, acquiredAt);
            long releasedAt = System.nanoTime();
            try (PreparedStatement release = other.prepareStatement(
                    PostgresAdvisoryLocks.release(PostgresDialect.channel("cerberus_locks"), false))) {
                release.setInt(1, (int) (advisory >>> 32));
                release.setInt(2, (int) advisory);
                release.setString(3, LockRows.key("cerberus_locks", lockKey));
                release.setLong(4, advisory);
                try (ResultSet rows = release.executeQuery()) {
                    assertThat(rows.next() && rows.getBoolean(1))
                            .as("the other process released")
                            .isTrue();
                }
            }
            waiter.join(TestTimes.millis(10_000).toMillis());
            assertThat(acquiredAt.get()).as("the waiter acquired").isNotZero();
            assertThat(Duration.ofNanos(acquiredAt.get() - releasedAt))
                    .as("woken by the notification")
                    .isLessThan(Duration.ofMillis(400));
        }
    }

    @Test
    void namesAreParametersAndTableNamesAreChecked() {
        List<String> hostile = List.of(
                "x'); DROP TABLE cerberus_locks; --",
                "' OR '1'='1",
                "\"; DELETE FROM cerberus_locks; --",
                "a\\'b",
                "%",
                "_");
        for (String url : List.of(H2.uri(), POSTGRES.uri(), MARIADB.uri())) {
            Cerberus cerberus = client(url);
            DistributedLock bystander = cerberus.lock("bystander");
            bystander.lock();
            for (String name : hostile) {
                DistributedLock lock = cerberus.lock(name);
                assertThat(lock.tryLock())
                        .as("'%s' on %s is just a name", name, url)
                        .isTrue();
                assertThat(client(url).lock(name).tryLock()).isFalse();
                lock.unlock();
            }
            assertThat(client(url).lock("bystander").tryLock())
                    .as("other locks untouched on %s", url)
                    .isFalse();
            assertThat(cerberus.inspect(""))
                    .extracting(io.cerberus.LockInfo::name)
                    .containsExactly("bystander");
            bystander.unlock();
        }
        assertThatThrownBy(() -> JdbcOptions.defaults().table("locks; DROP TABLE users"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("letters, digits and underscores");
        assertThatThrownBy(() -> client(Databases.with(POSTGRES.uri(), "cerberus.table=a%3BDROP")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table name must be");
    }

    @Test
    void manyNamesDoNotSlowAcquireTheLookupUsesThePrimaryKey() throws Exception {
        String table = "many_" + UUID.randomUUID().toString().substring(0, 8);
        for (String url : List.of(POSTGRES.uri(), MARIADB.uri())) {
            Cerberus cerberus = client(Databases.with(url, "cerberus.table=" + table));
            try (Connection c = DriverManager.getConnection(url);
                    Statement statement = c.createStatement()) {
                String series = url.startsWith("jdbc:postgresql")
                        ? "SELECT md5(i::text) || md5((i + 1)::text), 'bulk', 'n' || i, NULL, NULL, 1, 0 FROM generate_series(1, 100000) i"
                        : "SELECT CONCAT(MD5(seq), MD5(seq + 1)), 'bulk', CONCAT('n', seq), NULL, NULL, 1, 0 FROM seq_1_to_100000";
                statement.execute("INSERT INTO " + table
                        + " (lock_key, namespace, name, owner, holder, fence, expires_at) " + series);
                statement.execute(url.startsWith("jdbc:postgresql") ? "ANALYZE " + table : "ANALYZE TABLE " + table);
                DistributedLock lock = cerberus.lock("among-many");
                assertThat(lock.tryLock()).isTrue();
                String key = "'" + LockRows.key(table, new LockKey(namespace, "among-many")) + "'";
                String plan = explain(
                        statement,
                        "EXPLAIN "
                                + new PostgresDialect(table)
                                        .readRowSql
                                        .replace("?", key)
                                        .replace(
                                                PostgresDialect.NOW,
                                                url.startsWith("jdbc:postgresql")
                                                        ? PostgresDialect.NOW
                                                        : MariaDbDialect.NOW));
                assertThat(plan).as("the plan on %s", url).containsAnyOf("Index Scan", "Index Only Scan", "PRIMARY");
                if (url.startsWith("jdbc:postgresql")) {
                    // the read after a refused acquire marks the row wanted: an update by primary key too
                    String mark = explain(
                            statement,
                            "EXPLAIN "
                                    + new PostgresDialect(table)
                                            .markWantedSql
                                            .replaceFirst("\\?", "5000")
                                            .replace("?", key));
                    assertThat(mark).as("the marking update's plan").contains("Index Scan");
                }
                lock.unlock();
            }
        }
    }

    private static String explain(Statement statement, String sql) throws SQLException {
        StringBuilder plan = new StringBuilder();
        try (ResultSet rows = statement.executeQuery(sql)) {
            int columns = rows.getMetaData().getColumnCount();
            while (rows.next()) {
                for (int i = 1; i <= columns; i++) {
                    plan.append(rows.getString(i)).append(' ');
                }
                plan.append('\n');
            }
        }
        return plan.toString();
    }

    @Test
    void locksLiveOutsideTheCallersTransaction() throws Exception {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(POSTGRES.uri());
        Cerberus cerberus = Cerberus.builder()
                .engine("jdbc:postgresql://app-pool", JdbcOptions.dataSource(dataSource))
                .namespace(namespace)
                .build();
        clients.add(cerberus);
        try (Connection app = dataSource.getConnection()) {
            app.setAutoCommit(false);
            try (Statement statement = app.createStatement()) {
                statement.execute("CREATE TEMPORARY TABLE orders (id int)");
                statement.execute("INSERT INTO orders VALUES (1)");
            }
            DistributedLock lock = cerberus.lock("order:1");
            lock.lock();
            app.rollback();
            assertThat(client(POSTGRES.uri()).lock("order:1").tryLock())
                    .as("the caller's rollback did not free the lock")
                    .isFalse();
            lock.unlock();
            assertThat(client(POSTGRES.uri()).lock("order:1").tryLock())
                    .as("the release did not wait for a commit")
                    .isTrue();
        }
    }

    @Test
    void notificationWakesAWaiterOfAnotherProcess() throws Exception {
        String url = POSTGRES.uri();
        Cerberus cerberus = client(url);
        String key = LockRows.key("cerberus_locks", new LockKey(namespace, "notified"));
        DistributedLock lock = cerberus.lock("notified");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        try (Connection other = DriverManager.getConnection(url)) {
            // another process holds the lock: its row, written by hand, for a minute
            update(other, heldElsewhere("notified"), key);
            for (int round = 0; round < 3; round++) {
                AtomicLong acquiredAt = new AtomicLong();
                Thread waiter = waiterWithGrownBackoff(lock, acquiredAt);
                long releasedAt = System.nanoTime();
                try (PreparedStatement release =
                        other.prepareStatement(new PostgresDialect("cerberus_locks").notifyingReleaseSql)) {
                    release.setString(1, key);
                    release.setString(2, "elsewhere");
                    try (ResultSet rows = release.executeQuery()) {
                        assertThat(rows.next()).isTrue();
                    }
                }
                waiter.join(TestTimes.millis(10_000).toMillis());
                assertThat(acquiredAt.get()).as("the waiter acquired").isNotZero();
                assertThat(Duration.ofNanos(acquiredAt.get() - releasedAt))
                        .as("woken by the notification, round %d", round)
                        .isLessThan(Duration.ofMillis(400));
                update(other, heldElsewhere("notified"), key);
            }
            update(other, "UPDATE cerberus_locks SET owner = NULL, expires_at = 0 WHERE lock_key = ?", key);
        }
    }

    /** @return an upsert that makes another process ('elsewhere') hold {@code name} for a minute. Parameter: key. */
    private String heldElsewhere(String name) {
        return "INSERT INTO cerberus_locks (lock_key, namespace, name, owner, fence, expires_at) VALUES (?, '"
                + namespace + "', '" + name + "', 'elsewhere', nextval('cerberus_locks_fence_seq'), "
                + PostgresDialect.NOW
                + " + 60000) ON CONFLICT (lock_key) DO UPDATE SET owner = 'elsewhere', expires_at = EXCLUDED.expires_at";
    }

    @Test
    void releaseNotifiesOnlyWhenAnotherClientWasRefused() throws Exception {
        String url = POSTGRES.uri();
        DistributedLock lock = client(url).lock("wanted");
        Cerberus other = client(url);
        String key = LockRows.key("cerberus_locks", new LockKey(namespace, "wanted"));
        try (Connection listening = DriverManager.getConnection(url)) {
            try (Statement statement = listening.createStatement()) {
                statement.execute("LISTEN " + PostgresDialect.channel("cerberus_locks"));
            }
            org.postgresql.PGConnection pg = listening.unwrap(org.postgresql.PGConnection.class);
            for (int i = 0; i < 3; i++) {
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
            assertThat(notifiedKeys(pg, 300))
                    .as("nobody else asked: no notification")
                    .doesNotContain(key);

            assertThat(lock.tryLock()).isTrue();
            assertThat(other.lock("wanted").tryLock())
                    .as("another client is refused, and marks the row wanted")
                    .isFalse();
            lock.unlock();
            assertThat(notifiedKeys(pg, 5000))
                    .as("the release notifies the other client's waiters")
                    .contains(key);

            // the mark went with the released row: the next hold's release is quiet again
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            assertThat(notifiedKeys(pg, 300)).doesNotContain(key);
        }
    }

    /**
     * Starts a thread that waits up to 20 s for {@code lock}, and notes when it got it in
     * {@code acquiredAt}; returns once the waiter has waited long enough for its backoff to grow to
     * its ceiling of a second, so that only a notification can wake it soon after a release.
     */
    private static Thread waiterWithGrownBackoff(DistributedLock lock, AtomicLong acquiredAt) {
        Thread waiter = new Thread(() -> {
            try {
                if (lock.tryLock(20, TimeUnit.SECONDS)) {
                    acquiredAt.set(System.nanoTime());
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        long grown = System.nanoTime() + Duration.ofMillis(2500).toNanos();
        Poll.until("the waiter's backoff to grow", TestTimes.millis(10_000), () -> System.nanoTime() - grown > 0);
        return waiter;
    }

    /** @return whether {@code key} is notified to this connection within the time */
    private static boolean firstNotified(org.postgresql.PGConnection pg, String key, int millis) throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            org.postgresql.PGNotification[] notifications =
                    pg.getNotifications((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            if (notifications != null) {
                for (org.postgresql.PGNotification notification : notifications) {
                    if (notification.getParameter().equals(key)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** @return the payloads notified to this connection within the time */
    private static List<String> notifiedKeys(org.postgresql.PGConnection pg, int millis) throws SQLException {
        List<String> keys = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            org.postgresql.PGNotification[] notifications =
                    pg.getNotifications((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            if (notifications != null) {
                for (org.postgresql.PGNotification notification : notifications) {
                    keys.add(notification.getParameter());
                }
            }
        }
        return keys;
    }

    /**
     * MariaDB has no notification: the mark only stops a holder of another client from handing
     * the lock round its own threads. So a refusal writes it only when the holder is of another
     * client, and leaves a mark that still stands for more than half its length as it is.
     */
    @Test
    void mariaDbMarksTheRowWantedOnlyWhenTheHolderIsAnotherClients() throws Exception {
        String url = MARIADB.uri();
        LockKey name = new LockKey(namespace, "wanted");
        String key = LockRows.key("cerberus_locks", name);
        try (LockEngine holder = io.cerberus.testkit.Engines.open(url, Duration.ofSeconds(5));
                LockEngine other = io.cerberus.testkit.Engines.open(url, Duration.ofSeconds(5))) {
            Acquisition held = new Acquisition(
                    name, LockMode.EXCLUSIVE, UUID.randomUUID().toString(), "holder", Duration.ofSeconds(30));
            assertThat(holder.tryAcquire(held)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition sameClient = new Acquisition(
                    name, LockMode.EXCLUSIVE, UUID.randomUUID().toString(), "same", Duration.ofSeconds(30));
            assertThat(holder.tryAcquire(sameClient))
                    .as("refused to another attempt of the holder's client")
                    .isInstanceOf(AcquireResult.Busy.class);
            holder.abandon(sameClient);
            assertThat(wantedUntil(url, key))
                    .as("the holder's own line hands the lock on: no mark")
                    .isZero();

            // one waiting attempt of another client, asking again and again as it would while it waits
            Acquisition waiting = new Acquisition(
                    name, LockMode.EXCLUSIVE, UUID.randomUUID().toString(), "waiter", Duration.ofSeconds(30));
            long before = System.currentTimeMillis();
            assertThat(other.tryAcquire(waiting))
                    .as("refused to another client")
                    .isInstanceOf(AcquireResult.Busy.class);
            long mark = wantedUntil(url, key);
            assertThat(mark)
                    .as("marked for %d ms of the database's clock", LeaseRowEngine.WANTED_MARK_MS)
                    .isBetween(
                            before + LeaseRowEngine.WANTED_MARK_MS - 2000,
                            System.currentTimeMillis() + LeaseRowEngine.WANTED_MARK_MS + 2000);
            assertThat(other.tryAcquire(waiting)).isInstanceOf(AcquireResult.Busy.class);
            assertThat(wantedUntil(url, key))
                    .as("its own mark that stands for most of its length is not written again")
                    .isEqualTo(mark);
            try (Connection connection = DriverManager.getConnection(url)) {
                // a mark as the holder could have left while it waited itself, standing for more than half of its
                // length still: it must not keep the waiter's place
                update(
                        connection,
                        "UPDATE cerberus_locks SET wanted_until = wanted_until - 1000 WHERE lock_key = ?",
                        key);
            }
            assertThat(other.tryAcquire(waiting)).isInstanceOf(AcquireResult.Busy.class);
            long replaced = wantedUntil(url, key);
            assertThat(replaced)
                    .as("a mark not its own is replaced by the waiter's")
                    .isGreaterThanOrEqualTo(mark);
            try (Connection connection = DriverManager.getConnection(url)) {
                update(
                        connection,
                        "UPDATE cerberus_locks SET wanted_until = " + MariaDbDialect.NOW + " + 1000 WHERE lock_key = ?",
                        key);
            }
            assertThat(other.tryAcquire(waiting)).isInstanceOf(AcquireResult.Busy.class);
            assertThat(wantedUntil(url, key))
                    .as("a mark about to lapse is renewed")
                    .isGreaterThan(replaced);
            other.abandon(waiting);
            assertThat(holder.release(held)).isTrue();
        }
    }

    private static long wantedUntil(String url, String key) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url);
                PreparedStatement statement =
                        connection.prepareStatement("SELECT wanted_until FROM cerberus_locks WHERE lock_key = ?")) {
            statement.setString(1, key);
            try (java.sql.ResultSet rows = statement.executeQuery()) {
                assertThat(rows.next()).isTrue();
                return rows.getLong(1);
            }
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"postgres", "mariadb"})
    void lockTableOfAnEarlierVersionGetsTheWantedColumn(String database) throws Exception {
        String url = database.equals("postgres") ? POSTGRES.uri() : MARIADB.uri();
        String alter =
                database.equals("postgres") ? "ADD COLUMN IF NOT EXISTS wanted_until" : "ADD COLUMN wanted_until";
        String table = "old_locks_" + UUID.randomUUID().toString().substring(0, 8);
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement()) {
            statement.execute(
                    "CREATE TABLE " + table
                            + " (lock_key VARCHAR(64) NOT NULL PRIMARY KEY, namespace VARCHAR(128) NOT NULL, "
                            + "name VARCHAR(512) NOT NULL, owner VARCHAR(64), holder VARCHAR(256), fence BIGINT NOT NULL, expires_at BIGINT NOT NULL)");
        }
        assertThatThrownBy(() -> client(Databases.with(url, "cerberus.table=" + table + "&cerberus.createTable=false")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has no column wanted_until")
                .hasMessageContaining("ALTER TABLE " + table + " " + alter + " BIGINT NOT NULL DEFAULT 0");
        DistributedLock lock =
                client(Databases.with(url, "cerberus.table=" + table)).lock("upgraded");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThat(client(Databases.with(url, "cerberus.table=" + table + "&cerberus.createTable=false"))
                        .lock("upgraded")
                        .tryLock())
                .as("the table has the column now")
                .isTrue();
    }

    @Test
    void postgresCancelsAStatementThatWaitsPastTheTimeout() throws Exception {
        String url = POSTGRES.uri();
        Cerberus cerberus = Cerberus.builder()
                .engine(url)
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(1))
                .build();
        clients.add(cerberus);
        DistributedLock lock = cerberus.lock("blocked");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        String key = LockRows.key("cerberus_locks", new LockKey(namespace, "blocked"));
        try (Connection other = DriverManager.getConnection(url)) {
            // a transaction of someone else writes the lock's row (left free by the release, or inserted if swept
            // since), uncommitted: our acquire waits for it
            other.setAutoCommit(false);
            try (PreparedStatement write = other.prepareStatement(
                    "INSERT INTO cerberus_locks (lock_key, namespace, name, fence, expires_at) VALUES (?, ?, 'blocked', 0, 0)"
                            + " ON CONFLICT (lock_key) DO UPDATE SET wanted_until = 0")) {
                write.setString(1, key);
                write.setString(2, namespace);
                assertThat(write.executeUpdate()).isOne();
            }
            long start = System.nanoTime();
            // the server's statement_timeout of the engine's connections, not a timer in the driver
            assertThatThrownBy(lock::tryLock).hasStackTraceContaining("canceling statement due to statement timeout");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(5000));
            other.rollback();
        }
        assertThat(lock.tryLock())
                .as("the engine works on once the row is free")
                .isTrue();
        lock.unlock();
    }

    private static void update(Connection connection, String sql, String key) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, key);
            assertThat(statement.executeUpdate()).isEqualTo(1);
        }
    }

    /**
     * MariaDB's acquire of a name without a row is the upsert, which inserts the row with fence 0, and the
     * {@code UPDATE} that draws its fence under the row's lock and returns it as its generated key
     * ({@code LAST_INSERT_ID(NEXTVAL(…))}). A name's first release deletes its row; a release of a name released
     * before leaves the row free, so the next acquire of the name is one {@code UPDATE} the same way: with the
     * release, two statements a cycle. A refusal adds a read of the row, and a row deleted since (by the sweep),
     * the upsert and the draw. Counted on the application's data source.
     */
    @Test
    void mariaDbAcquiresAFreeNameInOneStatementAndReleasesInOne() throws Exception {
        String url = MARIADB.uri();
        List<String> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        TestDataSource recording = new TestDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                Connection physical = DriverManager.getConnection(url);
                return (Connection) java.lang.reflect.Proxy.newProxyInstance(
                        getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                            if (method.getName().startsWith("prepare")
                                    && ((String) args[0]).contains(JdbcTarget.DEFAULT_TABLE)) {
                                sent.add((String) args[0]);
                            }
                            try {
                                return method.invoke(physical, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
        Cerberus cerberus = Cerberus.builder()
                .engine(url, JdbcOptions.dataSource(recording))
                .namespace(namespace)
                .build();
        clients.add(cerberus);
        DistributedLock lock = cerberus.lock("again");

        io.cerberus.Lease first = lock.tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(sent)
                .as("a name never seen: the upsert inserts its row, the update draws its fence")
                .hasSize(2);
        assertThat(sent.get(0)).startsWith("INSERT");
        assertThat(sent.get(1)).startsWith("UPDATE");
        assertThat(first.fencingToken()).isPositive();
        sent.clear();
        first.close();
        assertThat(sent).as("the first release").hasSize(1);
        assertThat(sent.get(0)).startsWith("DELETE");
        sent.clear();
        io.cerberus.Lease again = lock.tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(sent).as("the row deleted: the upsert and the draw").hasSize(2);
        assertThat(sent.get(0)).startsWith("INSERT");
        sent.clear();
        again.close();
        assertThat(sent).as("a release of a name released before").hasSize(1);
        assertThat(sent.get(0)).startsWith("UPDATE");
        sent.clear();
        io.cerberus.Lease second = lock.tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(sent).as("the row left free: one update").hasSize(1);
        assertThat(sent.get(0)).startsWith("UPDATE");
        assertThat(second.fencingToken()).isGreaterThan(again.fencingToken());
        assertThat(again.fencingToken()).isGreaterThan(first.fencingToken());

        DistributedLock other = client(url).lock("again");
        assertThat(other.tryAcquire(Duration.ZERO)).as("refused while held").isEmpty();
        sent.clear();
        assertThat(lock.tryAcquire(Duration.ZERO))
                .as("refused to another attempt of the holder's client too")
                .isEmpty();
        assertThat(sent)
                .as("refused: the update of the row seen, a read (then the release of the attempt given up)")
                .hasSize(3);
        assertThat(sent.get(0)).startsWith("UPDATE");
        assertThat(sent.get(1)).startsWith("SELECT");

        // the other client takes the name and releases it; the sweep then deletes the free row
        second.close();
        io.cerberus.Lease third = other.tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(third.fencingToken()).as("another client's grant").isGreaterThan(second.fencingToken());
        assertThat(lock.tryAcquire(Duration.ZERO))
                .as("refused while the other client holds")
                .isEmpty();
        third.close();
        try (Connection connection = DriverManager.getConnection(url);
                PreparedStatement delete = connection.prepareStatement(
                        "DELETE FROM " + JdbcTarget.DEFAULT_TABLE + " WHERE lock_key = ? AND owner IS NULL")) {
            delete.setString(1, LockRows.key(JdbcTarget.DEFAULT_TABLE, new LockKey(namespace, "again")));
            assertThat(delete.executeUpdate())
                    .as("the free row, deleted as the sweep would")
                    .isOne();
        }
        sent.clear();
        io.cerberus.Lease afterDelete = lock.tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(sent)
                .as(
                        "a row deleted since: the update takes nothing, the read finds no row, the upsert inserts it, the update draws its fence")
                .hasSize(4);
        assertThat(sent.get(2)).startsWith("INSERT");
        assertThat(sent.get(3)).startsWith("UPDATE");
        assertThat(afterDelete.fencingToken()).isGreaterThan(third.fencingToken());
        afterDelete.close();
    }

    /**
     * Renewals of many holds lose exactly the holds whose rows are no longer theirs, on every
     * database: on MariaDB one statement renews up to 500 holds of one lease, and a short row
     * count has the rows read back.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"postgres", "mariadb"})
    void aBatchOfRenewalsLosesExactlyTheHoldsTakenAway(String database) throws Exception {
        String url = database.equals("postgres") ? POSTGRES.uri() : MARIADB.uri();
        try (LockEngine engine = io.cerberus.testkit.Engines.open(url, Duration.ofSeconds(5))) {
            List<Acquisition> held = new ArrayList<>();
            for (int i = 0; i < 700; i++) {
                // two leases: MariaDB renews holds of one lease per statement
                Acquisition attempt = new Acquisition(
                        new LockKey(namespace, "renew-" + i),
                        LockMode.EXCLUSIVE,
                        UUID.randomUUID().toString(),
                        "test",
                        Duration.ofSeconds(i % 7 == 0 ? 20 : 30));
                assertThat(engine.tryAcquire(attempt)).isInstanceOf(AcquireResult.Granted.class);
                held.add(attempt);
            }
            assertThat(engine.ability(RenewsInBatches.class).orElseThrow().renewAll(held))
                    .as("nothing taken away yet")
                    .isEmpty();
            try (Connection connection = DriverManager.getConnection(url);
                    Statement statement = connection.createStatement()) {
                statement.executeUpdate("UPDATE " + JdbcTarget.DEFAULT_TABLE
                        + " SET owner = 'someone else' WHERE name IN ('renew-3', 'renew-650',"
                        + " 'renew-7') AND namespace = '" + namespace + "'");
            }
            assertThat(engine.ability(RenewsInBatches.class).orElseThrow().renewAll(held))
                    .containsExactlyInAnyOrder(held.get(3), held.get(650), held.get(7));
        }
    }

    @Test
    void badSettingsAreRejectedWithTheRule() {
        String h2 = H2.uri();
        assertThatThrownBy(() -> client(Databases.with(h2, "cerberus.colour=blue")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown setting cerberus.colour");
        assertThatThrownBy(() -> client(Databases.with(h2, "cerberus.mode=exclusive")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cerberus.mode must be lease-row or session");
        assertThatThrownBy(() -> client(Databases.with(h2, "cerberus.poolSize=0")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cerberus.poolSize must be 1 to 1000");
        assertThatThrownBy(() -> client(Databases.with(h2, "cerberus.sessionCheckMs=5")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 100ms");
        assertThatThrownBy(() -> client(Databases.with(h2, "cerberus.table=absent&cerberus.createTable=false")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not exist")
                .hasMessageContaining("CREATE TABLE IF NOT EXISTS absent");
        assertThatThrownBy(() -> client("jdbc:nosuchdb://127.0.0.1/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no JDBC driver");
        assertThatThrownBy(() -> client("jdbc:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("JDBC URL");
    }
}
