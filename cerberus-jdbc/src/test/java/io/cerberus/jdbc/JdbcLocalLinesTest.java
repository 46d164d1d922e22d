package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The core's local line of waiters, with the JDBC engines' turns and hand-overs, on real PostgreSQL, MariaDB and H2, in both modes:
 * what the waiters of one JVM send, and that timeouts, interrupts and releases in another process
 * still work when only the head of the line asks. Statements are counted by the application's
 * data source, per thread.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JdbcLocalLinesTest {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    private static final String TABLE = "cerberus_locks";
    private final String namespace = "lines-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    /** One database in one mode. */
    record Target(String label, String url, JdbcOptions.Mode mode) {
        SqlDialect dialect() {
            return url.startsWith("jdbc:postgresql")
                    ? new PostgresDialect(TABLE)
                    : url.startsWith("jdbc:mariadb") ? new MariaDbDialect(TABLE) : new H2Dialect(TABLE);
        }

        /** @return the upsert that takes a lock's row in one statement */
        String upsert() {
            SqlDialect dialect = dialect();
            return dialect instanceof PostgresDialect postgres
                    ? postgres.acquireSql
                    : dialect instanceof MariaDbDialect mariaDb ? mariaDb.acquireSql : ((H2Dialect) dialect).acquireSql;
        }

        /** @return on MariaDB the update that tries a row already seen before the upsert; elsewhere null */
        String takeExisting() {
            return dialect() instanceof MariaDbDialect mariaDb ? mariaDb.takeExistingSql : null;
        }

        /** @return whether the statement begins an ask: the acquire, or on MariaDB the update that tries a row already seen */
        boolean isAcquire(String sql) {
            if (mode == JdbcOptions.Mode.LEASE_ROW) {
                return sql.equals(upsert()) || sql.equals(takeExisting());
            }
            return sql.contains("pg_try_advisory_lock")
                    || sql.contains("GET_LOCK(")
                    || sql.contains("FOR UPDATE NOWAIT");
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static List<Target> targets() {
        return List.of(
                new Target("H2 lease-row", H2.uri(), JdbcOptions.Mode.LEASE_ROW),
                new Target("PostgreSQL lease-row", POSTGRES.uri(), JdbcOptions.Mode.LEASE_ROW),
                new Target("MariaDB lease-row", MARIADB.uri(), JdbcOptions.Mode.LEASE_ROW),
                new Target("H2 session", H2.uri(), JdbcOptions.Mode.SESSION),
                new Target("PostgreSQL session", POSTGRES.uri(), JdbcOptions.Mode.SESSION),
                new Target("MariaDB session", MARIADB.uri(), JdbcOptions.Mode.SESSION));
    }

    @AfterEach
    void close() throws Exception {
        for (Thread thread : threads) {
            thread.interrupt();
        }
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("targets")
    void localWaitersSendOneAcquirePerHandOff(Target target) throws Exception {
        CountingDataSource data = dataSource(target);
        DistributedLock lock = client(target, data).lock("hand-off");
        int workers = 6;
        int cycles = 15;
        lock.lock();
        lock.unlock();
        int acquiresBefore = data.acquires();
        int connectionsBefore = data.opened.get();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger grants = new AtomicInteger();
        List<Thread> started = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            started.add(thread("worker-" + w, () -> {
                try {
                    start.await();
                    for (int c = 0; c < cycles; c++) {
                        lock.lock();
                        try {
                            grants.incrementAndGet();
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        start.countDown();
        for (Thread thread : started) {
            join(thread, TestTimes.millis(60_000));
        }
        assertThat(grants.get()).isEqualTo(workers * cycles);
        assertThat(overlaps.get()).as("mutual exclusion").isZero();
        int acquires = data.acquires() - acquiresBefore;
        // before the line, every release made all waiters ask: about one acquire per waiter and hand-off
        assertThat(acquires)
                .as("acquire statements for %d grants among %d threads", grants.get(), workers)
                .isLessThanOrEqualTo(grants.get() + grants.get() / 10 + workers);
        if (target.mode() == JdbcOptions.Mode.LEASE_ROW
                && target.dialect().handOverRelease().isPresent()) {
            // the release hands the lock to the sleeping head: most grants send no acquire at all
            assertThat(acquires)
                    .as("acquire statements for %d grants handed round %d threads", grants.get(), workers)
                    .isLessThanOrEqualTo(grants.get() / 3);
        }
        if (target.mode() == JdbcOptions.Mode.SESSION) {
            assertThat(data.opened.get() - connectionsBefore)
                    .as("connections: only the attempt whose turn it is takes one")
                    .isLessThanOrEqualTo(acquires + 2);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("targets")
    void queuedWaiterSendsNothingAndTimesOutOnTime(Target target) throws Exception {
        CountingDataSource data = dataSource(target);
        DistributedLock lock = client(target, data).lock("timeout");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        thread("holder", () -> {
            lock.lock();
            held.countDown();
            try {
                letGo.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock.unlock();
            }
        });
        assertThat(held.await(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        AtomicLong headGot = new AtomicLong();
        Thread head = thread("head", () -> {
            lock.lock();
            headGot.set(System.nanoTime());
            lock.unlock();
        });
        Poll.untilWaiting(head, TestTimes.millis(5000));
        AtomicReference<Duration> took = new AtomicReference<>();
        AtomicReference<Boolean> got = new AtomicReference<>();
        Thread queued = thread("queued", () -> {
            long start = System.nanoTime();
            try {
                got.set(lock.tryLock(400, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            took.set(Duration.ofNanos(System.nanoTime() - start));
        });
        join(queued, TestTimes.millis(10_000));
        assertThat(got.get()).isFalse();
        assertThat(took.get())
                .isGreaterThanOrEqualTo(Duration.ofMillis(400))
                .isLessThan(Duration.ofMillis(400).plus(TestTimes.millis(700)));
        assertThat(data.acquiresBy("queued"))
                .as("the queued waiter never asked")
                .isZero();
        assertThat(data.acquiresBy("head"))
                .as("the lock is held in this client: the head waits for its release without asking")
                .isZero();
        long released = System.nanoTime();
        letGo.countDown();
        join(head, TestTimes.millis(10_000));
        assertThat(headGot.get()).as("the head got the lock").isNotZero();
        assertThat(Duration.ofNanos(headGot.get() - released))
                .as("woken by the release")
                .isLessThan(TestTimes.millis(1000));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("targets")
    void interruptedHeadHandsTheTurnOnAtOnce(Target target) throws Exception {
        CountingDataSource data = dataSource(target);
        DistributedLock lock = client(target, data).lock("interrupted");
        ForeignHold foreign = holdElsewhere(target, "interrupted");
        AtomicReference<Throwable> headOutcome = new AtomicReference<>();
        Thread head = thread("head", () -> {
            try {
                lock.lockInterruptibly();
                headOutcome.set(new AssertionError("acquired a lock held elsewhere"));
                lock.unlock();
            } catch (Throwable t) {
                headOutcome.set(t);
            }
        });
        Poll.until("the head to ask", TestTimes.millis(10_000), () -> data.acquiresBy("head") > 0);
        AtomicLong queuedGot = new AtomicLong();
        Thread queued = thread("queued", () -> {
            try {
                if (lock.tryLock(60, TimeUnit.SECONDS)) {
                    queuedGot.set(System.nanoTime());
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.untilWaiting(queued, TestTimes.millis(5000));
        Poll.untilWaiting(head, TestTimes.millis(5000));
        assertThat(data.acquiresBy("queued"))
                .as("queued behind the head, it has not asked")
                .isZero();

        long interrupted = System.nanoTime();
        head.interrupt();
        Poll.until("the queued waiter to ask", TestTimes.millis(10_000), () -> data.acquiresBy("queued") > 0);
        assertThat(Duration.ofNanos(System.nanoTime() - interrupted))
                .as("it asks at once, not after a backoff or a recheck")
                .isLessThan(TestTimes.millis(500));
        join(head, TestTimes.millis(5000));
        assertThat(headOutcome.get()).isInstanceOf(InterruptedException.class);

        long freed = System.nanoTime();
        foreign.free();
        join(queued, TestTimes.millis(10_000));
        assertThat(queuedGot.get())
                .as("the new head took the lock freed in the other process")
                .isNotZero();
        assertThat(Duration.ofNanos(queuedGot.get() - freed))
                .as("within its backoff")
                .isLessThan(TestTimes.millis(2500));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("targets")
    void lockFreedInAnotherProcessIsTakenByTheLineInTurn(Target target) throws Exception {
        CountingDataSource data = dataSource(target);
        DistributedLock lock = client(target, data).lock("freed");
        ForeignHold foreign = holdElsewhere(target, "freed");
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        Runnable takeTurn = () -> {
            lock.lock();
            order.add(Thread.currentThread().getName());
            lock.unlock();
        };
        Thread first = thread("first", takeTurn);
        Poll.until("the first to ask", TestTimes.millis(10_000), () -> data.acquiresBy("first") > 0);
        Thread second = thread("second", takeTurn);
        Poll.untilWaiting(second, TestTimes.millis(5000));
        Thread third = thread("third", takeTurn);
        Poll.untilWaiting(third, TestTimes.millis(5000));

        // freed without a notification, as by an expiry: the head finds out by its backoff
        foreign.free();
        join(first, TestTimes.millis(10_000));
        join(second, TestTimes.millis(10_000));
        join(third, TestTimes.millis(10_000));
        assertThat(order).as("the line is served first come, first served").containsExactly("first", "second", "third");
    }

    /** The lease-row targets whose release hands the lock over ({@link SqlDialect#handOverRelease}). */
    static List<Target> handOverTargets() {
        return List.of(
                new Target("PostgreSQL lease-row", POSTGRES.uri(), JdbcOptions.Mode.LEASE_ROW),
                new Target("MariaDB lease-row", MARIADB.uri(), JdbcOptions.Mode.LEASE_ROW));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handOverTargets")
    void releaseHandsTheLockToTheNextWaiterOfThisJvmWithTheNextFence(Target target) throws Exception {
        CountingDataSource data = dataSource(target);
        DistributedLock lock = client(target, data).lock("handed");
        Lease held = lock.acquire(Duration.ofSeconds(10));
        Waiter waiter = waiterAsleep(lock, data);
        long released = System.nanoTime();
        held.close();
        join(waiter.thread, TestTimes.millis(10_000));
        Lease handed = waiter.lease.get();
        assertThat(handed).as("the waiter got the lock").isNotNull();
        assertThat(handed.fencingToken())
                .as("a hand-off is a new hold: a greater fence")
                .isGreaterThan(held.fencingToken());
        assertThat(data.acquiresBy("waiter"))
                .as("handed over in the release, the waiter never asked")
                .isZero();
        assertThat(Duration.ofNanos(waiter.grantedAt.get() - released))
                .as("woken by the hand-off")
                .isLessThan(TestTimes.millis(1000));
        assertThat(lock.isLocked()).isTrue();
        handed.close();
        assertThat(lock.isLocked()).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handOverTargets")
    void handOffsKeepMutualExclusionAndFenceOrderWithAnotherProcess(Target target) throws Exception {
        DistributedLock here = client(target, dataSource(target)).lock("shared");
        DistributedLock elsewhere = client(target, dataSource(target)).lock("shared");
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong lastFence = new AtomicLong();
        AtomicInteger outOfOrder = new AtomicInteger();
        AtomicInteger cyclesHere = new AtomicInteger();
        java.util.function.Consumer<Lease> critical = lease -> {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            if (lease.fencingToken() <= lastFence.getAndSet(lease.fencingToken())) {
                outOfOrder.incrementAndGet();
            }
            inside.decrementAndGet();
        };
        CountDownLatch done = new CountDownLatch(1);
        List<Thread> busy = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            busy.add(thread("here-" + w, () -> {
                try {
                    while (done.getCount() > 0) {
                        try (Lease lease = here.acquire(TestTimes.millis(20_000))) {
                            critical.accept(lease);
                            cyclesHere.incrementAndGet();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        Poll.until("the threads here to hand the lock round", TestTimes.millis(10_000), () -> cyclesHere.get() > 200);
        List<Duration> waits = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            long start = System.nanoTime();
            try (Lease lease = elsewhere.acquire(TestTimes.millis(20_000))) {
                waits.add(Duration.ofNanos(System.nanoTime() - start));
                critical.accept(lease);
            }
        }
        int before = cyclesHere.get();
        Poll.until("the threads here to go on", TestTimes.millis(10_000), () -> cyclesHere.get() > before + 50);
        done.countDown();
        for (Thread thread : busy) {
            join(thread, TestTimes.millis(30_000));
        }
        assertThat(overlaps.get()).as("mutual exclusion").isZero();
        assertThat(outOfOrder.get())
                .as("fences grow with every hold, handed over or not")
                .isZero();
        assertThat(waits)
                .as("waits of the other process while three threads here hand the lock round")
                .allSatisfy(wait -> assertThat(wait).isLessThan(TestTimes.millis(2000)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handOverTargets")
    void handsOnForATurnThenReleasesForTheOtherProcessAndHoldsBack(Target target) throws Exception {
        CountingDataSource data = dataSource(target);
        DistributedLock lock = client(target, data).lock("turn");
        Lease first = lock.acquire(Duration.ofSeconds(10));
        long grantedAt = System.nanoTime();
        try (LockEngine elsewhere = Engines.open(target.url(), Duration.ofSeconds(10))) {
            Acquisition refused = attempt(new LockKey(namespace, "turn"), "elsewhere");
            assertThat(elsewhere.tryAcquire(refused))
                    .as("refused, the other client marks the lock wanted")
                    .isInstanceOf(AcquireResult.Busy.class);
            elsewhere.abandon(refused);
        }
        Waiter waiter = waiterAsleep(lock, data);
        Poll.until(
                "the turn to pass",
                TestTimes.millis(10_000),
                () -> System.nanoTime() - grantedAt > LeaseRowEngine.TURN.toNanos());
        long released = System.nanoTime();
        first.close();
        join(waiter.thread, TestTimes.millis(10_000));
        Lease next = waiter.lease.get();
        assertThat(next).as("the waiter got the lock").isNotNull();
        assertThat(data.acquiresBy("waiter"))
                .as("released for all once the turn is over, not handed over: the waiter asked")
                .isEqualTo(1);
        assertThat(Duration.ofNanos(waiter.grantedAt.get() - released))
                .as("the line held back for the other process's poll")
                .isGreaterThanOrEqualTo(LeaseRowEngine.HOLD_BACK);
        assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
        next.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handOverTargets")
    void waitersThatGiveUpWhileTheLockIsHandedRoundLeaveNoHoldBehind(Target target) throws Exception {
        DistributedLock lock = client(target, dataSource(target)).lock("impatient");
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger timeouts = new AtomicInteger();
        long until = System.nanoTime() + TestTimes.millis(1500).toNanos();
        List<Thread> started = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            started.add(thread("impatient-" + w, () -> {
                try {
                    while (System.nanoTime() - until < 0) {
                        Optional<Lease> lease = lock.tryAcquire(
                                Duration.ofNanos(ThreadLocalRandom.current().nextLong(50_000, 2_000_000)));
                        if (lease.isPresent()) {
                            grants.incrementAndGet();
                            lease.get().close();
                        } else {
                            timeouts.incrementAndGet();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        for (Thread thread : started) {
            join(thread, TestTimes.millis(30_000));
        }
        assertThat(grants.get()).isPositive();
        assertThat(timeouts.get())
                .as("waits short enough to run out during hand-offs")
                .isPositive();
        DistributedLock fresh = client(target, dataSource(target)).lock("impatient");
        assertThat(fresh.isLocked())
                .as("no hold is left behind by a waiter that gave up")
                .isFalse();
        assertThat(fresh.tryAcquire(Duration.ZERO)).isPresent().get().satisfies(Lease::close);
    }

    @Test
    void repeatedTryOfAGrantedAttemptIsGrantedAgainWhileOthersAreRefused() {
        for (String url : List.of(H2.uri(), POSTGRES.uri(), MARIADB.uri())) {
            try (LockEngine engine = Engines.open(url, Duration.ofSeconds(10))) {
                LockKey key = new LockKey(namespace, "repeated");
                Acquisition owner = attempt(key, "owner");
                Acquisition head = attempt(key, "head");
                Acquisition queued = attempt(key, "queued");
                AcquireResult granted = engine.tryAcquire(owner);
                assertThat(granted).isInstanceOf(AcquireResult.Granted.class);
                assertThat(engine.tryAcquire(head)).isInstanceOf(AcquireResult.Busy.class);
                assertThat(engine.tryAcquire(queued)).isInstanceOf(AcquireResult.Busy.class);
                assertThat(engine.tryAcquire(owner))
                        .as("a repeat on %s is granted again, with the same fence", url)
                        .isEqualTo(granted);
                engine.abandon(queued);
                engine.abandon(head);
                assertThat(engine.release(owner)).isTrue();
                assertThat(engine.isLocked(key)).isFalse();
            }
        }
    }

    private static Acquisition attempt(LockKey key, String holder) {
        return new Acquisition(
                key, LockMode.EXCLUSIVE, UUID.randomUUID().toString().replace("-", ""), holder, Duration.ofSeconds(30));
    }

    // ---- helpers -------------------------------------------------------------------------------

    private Cerberus client(Target target, CountingDataSource data) {
        Cerberus cerberus = Cerberus.builder()
                .engine(target.url(), JdbcOptions.dataSource(data).mode(target.mode()))
                .namespace(namespace)
                .build();
        resources.add(cerberus);
        return cerberus;
    }

    private CountingDataSource dataSource(Target target) {
        // session mode closes its connections to end the session: those must really close
        CountingDataSource data = new CountingDataSource(target, target.mode() == JdbcOptions.Mode.LEASE_ROW);
        resources.add(data);
        return data;
    }

    /** A thread named "waiter" that acquires a lock, and what it got when. */
    private record Waiter(Thread thread, AtomicReference<Lease> lease, AtomicLong grantedAt) {}

    /** @return a waiter for {@code lock}, held in this client, that sleeps in its line */
    private Waiter waiterAsleep(DistributedLock lock, CountingDataSource data) {
        AtomicReference<Lease> lease = new AtomicReference<>();
        AtomicLong grantedAt = new AtomicLong();
        Thread waiter = thread("waiter", () -> {
            try {
                Lease granted = lock.acquire(TestTimes.millis(20_000));
                grantedAt.set(System.nanoTime());
                lease.set(granted);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        return new Waiter(waiter, lease, grantedAt);
    }

    private Thread thread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
        return thread;
    }

    private static void join(Thread thread, Duration timeout) throws InterruptedException {
        thread.join(timeout.toMillis());
        assertThat(thread.isAlive()).as("thread %s finished", thread.getName()).isFalse();
    }

    /** A hold of a lock taken by hand on a connection of its own, as another process would. */
    interface ForeignHold {
        /** Frees the lock without a notification and without waking anyone in this JVM. */
        void free() throws SQLException;
    }

    private ForeignHold holdElsewhere(Target target, String name) throws SQLException {
        Connection connection = DriverManager.getConnection(target.url());
        resources.add(connection);
        LockKey key = new LockKey(namespace, name);
        String rowKey = LockRows.key(TABLE, key);
        if (target.mode() == JdbcOptions.Mode.LEASE_ROW) {
            try (PreparedStatement acquire = connection.prepareStatement(target.upsert())) {
                acquire.setString(1, rowKey);
                acquire.setString(2, namespace);
                acquire.setString(3, name);
                acquire.setString(4, "elsewhere");
                acquire.setString(5, "another process");
                acquire.setLong(6, 60_000);
                if (target.dialect() instanceof PostgresDialect) {
                    acquire.setLong(7, PostgresDialect.grantLock(rowKey));
                }
                acquire.execute();
            }
            return () -> update(
                    connection,
                    "UPDATE " + TABLE
                            + " SET owner = NULL, holder = NULL, expires_at = 0 WHERE lock_key = ? AND owner = 'elsewhere'",
                    rowKey);
        }
        SqlDialect dialect = target.dialect();
        if (dialect instanceof PostgresDialect) {
            long advisory = LockRows.advisoryKey(TABLE, key);
            query(connection, "SELECT pg_advisory_lock(?)", advisory);
            return () -> query(connection, "SELECT pg_advisory_unlock(?)", advisory);
        }
        if (dialect instanceof MariaDbDialect) {
            String lockName = LockRows.sessionLockName(TABLE, key);
            query(connection, "SELECT GET_LOCK(?, 10)", lockName);
            return () -> query(connection, "SELECT RELEASE_LOCK(?)", lockName);
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + TABLE
                        + " (lock_key, namespace, name, owner, holder, fence, expires_at) VALUES (?, ?, ?, NULL, NULL, 0, 0)")) {
            insert.setString(1, rowKey);
            insert.setString(2, namespace);
            insert.setString(3, name);
            insert.executeUpdate();
        }
        connection.setAutoCommit(false);
        query(connection, "SELECT fence FROM " + TABLE + " WHERE lock_key = ? FOR UPDATE", rowKey);
        return connection::rollback;
    }

    private static void update(Connection connection, String sql, String key) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, key);
            assertThat(statement.executeUpdate()).isEqualTo(1);
        }
    }

    private static void query(Connection connection, String sql, Object parameter) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setObject(1, parameter);
            statement.executeQuery().close();
        }
    }

    /**
     * The application's data source: counts, per thread, the asks prepared on its connections
     * ({@link Target#isAcquire}), and the connections it opened; pools them when asked to.
     */
    static final class CountingDataSource extends TestDataSource implements AutoCloseable {
        private final Target target;
        private final boolean pooled;
        private final Deque<Connection> idle = new ConcurrentLinkedDeque<>();
        private final Map<String, AtomicInteger> acquiresByThread = new ConcurrentHashMap<>();
        private final Map<String, String> lastByThread = new ConcurrentHashMap<>();
        final AtomicInteger opened = new AtomicInteger();

        CountingDataSource(Target target, boolean pooled) {
            this.target = target;
            this.pooled = pooled;
        }

        int acquires() {
            return acquiresByThread.values().stream()
                    .mapToInt(AtomicInteger::get)
                    .sum();
        }

        int acquiresBy(String thread) {
            AtomicInteger count = acquiresByThread.get(thread);
            return count == null ? 0 : count.get();
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection pooledConnection = pooled ? idle.pollFirst() : null;
            Connection physical =
                    pooledConnection != null ? pooledConnection : DriverManager.getConnection(target.url());
            if (pooledConnection == null) {
                opened.incrementAndGet();
            }
            return (Connection) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().equals("prepareStatement")) {
                            String sql = (String) args[0];
                            String thread = Thread.currentThread().getName();
                            String previous = lastByThread.put(thread, sql);
                            // on MariaDB the upsert right after the update that took nothing is the same ask
                            boolean sameAsk = sql.equals(target.upsert())
                                    && previous != null
                                    && previous.equals(target.takeExisting());
                            if (target.isAcquire(sql) && !sameAsk) {
                                acquiresByThread
                                        .computeIfAbsent(thread, name -> new AtomicInteger())
                                        .incrementAndGet();
                            }
                        }
                        if (pooled && method.getName().equals("close")) {
                            idle.offerFirst(physical);
                            return null;
                        }
                        try {
                            return method.invoke(physical, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public void close() {
            Connection connection;
            while ((connection = idle.pollFirst()) != null) {
                ConnectionSource.closeQuietly(connection);
            }
        }
    }
}
