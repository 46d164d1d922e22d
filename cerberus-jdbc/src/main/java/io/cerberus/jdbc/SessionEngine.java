package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LossReporter;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The {@code jdbc:} engine in session mode: the database's own session locks, each attempt on a
 * connection of its own that it keeps while it waits and while it holds.
 *
 * <ul>
 *   <li>PostgreSQL: {@code pg_try_advisory_lock(bigint)} with the digest's first 64 bits; a
 *       release notifies the waiters ({@link PgListener}).
 *   <li>MariaDB/MySQL: {@code GET_LOCK(name, 0)} with a 49-character digest name (the limit is 64).
 *   <li>H2: {@code SELECT ... FOR UPDATE NOWAIT} on the lock's row, in a transaction held open.
 * </ul>
 *
 * <p>The database frees the lock when the connection dies (a client killed, a network cut, a
 * server-side idle timeout). A watcher checks every held connection at the session check interval
 * and reports one that died as lost, so the holder learns it then, not at unlock. The cost is one
 * connection per held lock and per attempt whose turn it is to ask; locks carry no fencing token.
 *
 * <p>Waiters of this engine line up per key as in lease-row mode ({@link LocalGate}): only the
 * first in line takes a connection and asks; a release here, the end of a session, or (on
 * PostgreSQL) a notification from another process wakes it. A connection whose session holds
 * nothing any more serves the next hold: opening one costs milliseconds, a hold a round trip.
 *
 * <p>On PostgreSQL a release notifies only when a client was refused the lock: a refused try marks
 * the key wanted, in the same statement, with a shared advisory lock on the key's two-int form
 * (a key space apart from the single-bigint keys of the locks), held while its session waits. A
 * release frees the lock first, then tries that mark exclusively: it is refused exactly when a
 * waiter of another session holds it, and only then notifies. A waiter marks before it tries
 * again, so a release after that try sees the mark. Processes take turns
 * ({@link LocalGate}): a release within this engine's turn while one of its threads waits frees
 * the lock without the check or a notification, and a release that notified holds this engine's
 * line back for a moment, so the woken waiter elsewhere gets the lock.
 */
final class SessionEngine implements LockEngine, KeepsIdempotencyRecords {
    private static final System.Logger LOG = System.getLogger(SessionEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(Capability.SESSION_BOUND, Capability.MULTI_PROCESS);
    private static final long MAX_BACKOFF_MS = LocalGate.MAX_BACKOFF_MS;

    private final Db db;
    private final Dialect dialect;
    private final String table;
    private final String channel;
    private final LossReporter lossReporter;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    /** The local line of each waiting attempt, by token, from its first try until granted or abandoned. */
    private final Map<String, LocalGate.Ticket> waiting = new ConcurrentHashMap<>();
    private final LocalGate gate;
    private final ScheduledExecutorService watcher;
    private final PgListener listener;
    private volatile boolean tableReady;

    /** One attempt's connection: while it waits, then while it holds. */
    private final class Session {
        final Acquisition attempt;
        final String key;
        final Connection connection;
        /** Whether the connection served an earlier hold and waited idle since: it may have died meanwhile. */
        final boolean reused;
        volatile boolean held;
        /** PostgreSQL: whether the session holds the key's wanted mark (guarded by the session). */
        boolean marked;
        /** PostgreSQL: whether its release notified a waiter of another session (guarded by the session). */
        boolean wokeOthers;

        Session(Acquisition attempt, String key, Connection connection, boolean reused) {
            this.attempt = attempt;
            this.key = key;
            this.connection = connection;
            this.reused = reused;
        }
    }

    /**
     * PostgreSQL's try: takes the lock, or when refused marks the key wanted and tries once more (a
     * release between the two tries did not see the mark). The subqueries fix the order. Parameters:
     * key, wanted mark (two ints), key. Returns: marked, granted.
     */
    private static final String PG_TRY_OR_MARK = "SELECT marked, CASE WHEN got THEN true WHEN marked THEN pg_try_advisory_lock(?) "
            + "ELSE false END FROM (SELECT got, CASE WHEN got THEN false ELSE pg_try_advisory_lock_shared(?, ?) END AS marked "
            + "FROM (SELECT pg_try_advisory_lock(?) AS got OFFSET 0) tried OFFSET 0) marking";

    private final JdbcIdempotencyStore idempotency;
    private final String pgRelease;
    private final String pgReleaseMarked;

    SessionEngine(Db db, String table, boolean createTable, Duration checkInterval, LossReporter lossReporter) {
        this.db = db;
        this.dialect = db.dialect;
        this.table = table;
        this.channel = LeaseRowEngine.channel(table);
        this.lossReporter = lossReporter;
        this.watcher = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "cerberus-jdbc-session-check");
            thread.setDaemon(true);
            return thread;
        });
        watcher.scheduleWithFixedDelay(this::checkSessions, checkInterval.toMillis(), checkInterval.toMillis(), TimeUnit.MILLISECONDS);
        this.listener = dialect == Dialect.POSTGRESQL ? PgListener.start(db.source, channel) : null;
        // PostgreSQL: a notification costs every listening session and a database-wide lock at commit
        this.gate = new LocalGate(LocalGate.STALE_HEAD_NANOS, listener != null ? Duration.ofMillis(LocalGate.TURN_MS) : null);
        this.idempotency = new JdbcIdempotencyStore(db, table, createTable, channel, listener != null);
        this.pgRelease = pgRelease(channel, false);
        this.pgReleaseMarked = pgRelease(channel, true);
    }

    @Override
    public String describe() {
        return db.describe;
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<String> whyNot(Capability capability) {
        if (capability == Capability.FENCING) {
            return Optional.of("the database's session locks carry no number; lease-row mode (the default) has fencing tokens");
        }
        if (capability == Capability.INSPECT) {
            return Optional.of("session locks are known by digest only; lease-row mode (the default) can list its locks");
        }
        return Optional.empty();
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        Session session = sessions.get(attempt.token());
        if (session != null && session.held) {
            return AcquireResult.granted(-1);
        }
        String key = LockRows.key(table, attempt.key());
        LocalGate.Ticket ticket = waiting.computeIfAbsent(attempt.token(), token -> gate.enter(key, attempt));
        try {
            AcquireResult.Busy notAsked = ticket.busyUnlessTurn();
            if (notAsked != null) {
                return notAsked;
            }
            if (session == null) {
                // only the attempt whose turn it is takes a connection: the others wait without one
                session = open(attempt, key, true);
            }
            boolean asked;
            try {
                asked = ask(session);
            } catch (EngineUnavailableException e) {
                if (!session.reused) {
                    throw e;
                }
                // an idle connection died while it waited (a restarted server): so did its peers
                db.source.purgeIdleSessions();
                session = open(attempt, key, false);
                asked = ask(session);
            }
            if (asked) {
                waiting.remove(attempt.token());
                ticket.granted(attempt.token(), attempt.lease());
                return AcquireResult.granted(-1);
            }
            ticket.busy(null, Duration.ofMillis(MAX_BACKOFF_MS));
            return AcquireResult.busy(Duration.ofMillis(MAX_BACKOFF_MS));
        } finally {
            ticket.endTry();
        }
    }

    /** Gives an attempt a connection of its own: an idle one when allowed and there is one, else a new one. */
    private Session open(Acquisition attempt, String key, boolean idleAllowed) {
        Connection connection = idleAllowed ? db.source.idleSession() : null;
        boolean reused = connection != null;
        if (connection == null) {
            try {
                connection = db.source.dedicated();
            } catch (SQLException e) {
                throw new EngineUnavailableException("could not connect to " + db.describe + ": " + e.getMessage(), e);
            }
        }
        Session session = new Session(attempt, key, connection, reused);
        sessions.put(attempt.token(), session);
        return session;
    }

    /** @return whether the session now holds its lock */
    private boolean ask(Session session) {
        synchronized (session) {
            try {
                if (tryLock(session)) {
                    session.held = true;
                    return true;
                }
                return false;
            } catch (SQLException e) {
                end(session, false);
                Acquisition attempt = session.attempt;
                if (SqlErrors.isConnectionFailure(e)) {
                    throw new EngineUnavailableException("acquiring " + attempt + " failed on " + db.describe + ": " + e.getMessage(), e);
                }
                throw new CerberusException("acquiring " + attempt + " failed on " + db.describe + ": " + e.getMessage()
                        + " (SQLState " + e.getSQLState() + ", error " + e.getErrorCode() + ")", e);
            }
        }
    }

    private boolean tryLock(Session session) throws SQLException {
        Connection c = session.connection;
        LockKey key = session.attempt.key();
        switch (dialect) {
            case POSTGRESQL:
                long advisory = LockRows.advisoryKey(table, key);
                if (session.marked) {
                    try (PreparedStatement statement = db.prepare(c, "SELECT pg_try_advisory_lock(?)")) {
                        statement.setLong(1, advisory);
                        try (ResultSet rows = statement.executeQuery()) {
                            return rows.next() && rows.getBoolean(1);
                        }
                    }
                }
                try (PreparedStatement statement = db.prepare(c, PG_TRY_OR_MARK)) {
                    statement.setLong(1, advisory);
                    statement.setInt(2, (int) (advisory >>> 32));
                    statement.setInt(3, (int) advisory);
                    statement.setLong(4, advisory);
                    try (ResultSet rows = statement.executeQuery()) {
                        if (!rows.next()) {
                            return false;
                        }
                        session.marked = rows.getBoolean(1);
                        return rows.getBoolean(2);
                    }
                }
            case MARIADB:
                try (PreparedStatement statement = db.prepare(c, "SELECT GET_LOCK(?, 0)")) {
                    statement.setString(1, LockRows.sessionLockName(table, key));
                    try (ResultSet rows = statement.executeQuery()) {
                        return rows.next() && rows.getInt(1) == 1;
                    }
                }
            case H2:
                return tryRowLock(c, session.key, key);
            default:
                throw new AssertionError(dialect);
        }
    }

    /** H2: makes sure the lock's row exists, then locks it in a transaction left open. */
    private boolean tryRowLock(Connection c, String rowKey, LockKey key) throws SQLException {
        if (!tableReady) {
            throw new IllegalStateException("the lock table is not ready");
        }
        c.setAutoCommit(true);
        try (PreparedStatement insert = db.prepare(c, "INSERT INTO " + table
                + " (lock_key, namespace, name, owner, holder, fence, expires_at) SELECT ?, ?, ?, NULL, NULL, 0, 0 FROM DUAL "
                + "WHERE NOT EXISTS (SELECT 1 FROM " + table + " WHERE lock_key = ?)")) {
            insert.setString(1, rowKey);
            insert.setString(2, key.namespace());
            insert.setString(3, key.name());
            insert.setString(4, rowKey);
            insert.executeUpdate();
        } catch (SQLException e) {
            if (!SqlErrors.isRetryable(e)) {
                throw e;
            }
            // inserted by someone else at the same moment: the row is there
        }
        c.setAutoCommit(false);
        try (PreparedStatement select = db.prepare(c, "SELECT fence FROM " + table + " WHERE lock_key = ? FOR UPDATE NOWAIT")) {
            select.setString(1, rowKey);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next();
            }
        } catch (SQLException e) {
            c.rollback();
            if (SqlErrors.isRetryable(e)) {
                return false;
            }
            throw e;
        }
    }

    void tableReady() {
        tableReady = true;
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        LocalGate.Ticket ticket = waiting.get(attempt.token());
        if (ticket != null) {
            ticket.await(max);
        }
    }

    @Override
    public void abandon(Acquisition attempt) {
        LocalGate.Ticket ticket = waiting.remove(attempt.token());
        if (ticket != null) {
            ticket.leave();
        }
        if (sessions.containsKey(attempt.token())) {
            release(attempt);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        Session session = sessions.get(attempt.token());
        return session != null && session.held && alive(session);
    }

    @Override
    public boolean release(Acquisition attempt) {
        Session session = sessions.get(attempt.token());
        if (session == null) {
            return false;
        }
        boolean released = false;
        synchronized (session) {
            // a connection that never held the lock, or gave it back, holds nothing and can serve again
            boolean clean = !session.held;
            if (session.held) {
                try {
                    released = unlock(session, gate.turnGoesOn(session.key, attempt.token()));
                    clean = released;
                } catch (SQLException e) {
                    LOG.log(Level.DEBUG, "releasing " + attempt + " on " + db.describe + " failed; ending its session frees it: " + e);
                }
            } else if (session.marked) {
                try {
                    clean = unmark(session);
                } catch (SQLException e) {
                    clean = false;
                }
            }
            end(session, clean, released && session.wokeOthers);
        }
        if (released) {
            Wakeups.JVM.signal(session.key);
        }
        return released;
    }

    /**
     * @param quietly PostgreSQL: release without looking for waiters elsewhere (this engine's next
     *     thread takes the lock in its turn, see {@link LocalGate#turnGoesOn})
     */
    private boolean unlock(Session session, boolean quietly) throws SQLException {
        Connection c = session.connection;
        switch (dialect) {
            case POSTGRESQL:
                long advisory = LockRows.advisoryKey(table, session.attempt.key());
                if (quietly) {
                    try (PreparedStatement statement = db.prepare(c, session.marked ? PG_RELEASE_QUIETLY_MARKED : PG_RELEASE_QUIETLY)) {
                        statement.setLong(1, advisory);
                        if (session.marked) {
                            statement.setInt(2, (int) (advisory >>> 32));
                            statement.setInt(3, (int) advisory);
                        }
                        try (ResultSet rows = statement.executeQuery()) {
                            session.marked = false;
                            return rows.next() && rows.getBoolean(1);
                        }
                    }
                }
                try (PreparedStatement statement = db.prepare(c, session.marked ? pgReleaseMarked : pgRelease)) {
                    int next = 1;
                    statement.setInt(next++, (int) (advisory >>> 32));
                    statement.setInt(next++, (int) advisory);
                    statement.setString(next++, session.key);
                    if (session.marked) {
                        statement.setInt(next++, (int) (advisory >>> 32));
                        statement.setInt(next++, (int) advisory);
                    }
                    statement.setLong(next, advisory);
                    try (ResultSet rows = statement.executeQuery()) {
                        boolean released = rows.next() && rows.getBoolean(1);
                        session.marked = false;
                        session.wokeOthers = released && rows.getBoolean(2);
                        return released;
                    }
                }
            case MARIADB:
                try (PreparedStatement statement = db.prepare(c, "SELECT RELEASE_LOCK(?)")) {
                    statement.setString(1, LockRows.sessionLockName(table, session.attempt.key()));
                    try (ResultSet rows = statement.executeQuery()) {
                        return rows.next() && rows.getInt(1) == 1;
                    }
                }
            case H2:
                if (!c.isValid(timeoutSeconds())) {
                    return false;
                }
                c.rollback();
                return true;
            default:
                throw new AssertionError(dialect);
        }
    }

    /**
     * PostgreSQL's release: frees the lock, then notifies the channel with the row key when a waiter
     * of another session holds the key's wanted mark, and drops this session's own mark if it has
     * one. Parameters: wanted mark (two ints), row key, [own mark (two ints)], key. Returns:
     * released, notified.
     *
     * @param channel the notification channel
     * @param marked whether the releasing session holds the wanted mark itself
     * @return the statement
     */
    static String pgRelease(String channel, boolean marked) {
        return "SELECT released, CASE WHEN NOT released THEN false WHEN pg_try_advisory_xact_lock(?, ?) THEN false "
                + "ELSE pg_notify('" + channel + "', ?) IS NOT NULL END" + (marked ? ", pg_advisory_unlock_shared(?, ?)" : "")
                + " FROM (SELECT pg_advisory_unlock(?) AS released OFFSET 0) unlocked";
    }

    /** PostgreSQL's release within a turn: frees the lock, notifies nobody. Parameter: key. Returns: released. */
    private static final String PG_RELEASE_QUIETLY = "SELECT pg_advisory_unlock(?)";
    /** {@link #PG_RELEASE_QUIETLY} that also drops the session's own wanted mark. Parameters: key, own mark (two ints). */
    private static final String PG_RELEASE_QUIETLY_MARKED = "SELECT pg_advisory_unlock(?), pg_advisory_unlock_shared(?, ?)";

    /** Drops the wanted mark of a session that did not get the lock; @return whether it had it */
    private boolean unmark(Session session) throws SQLException {
        long advisory = LockRows.advisoryKey(table, session.attempt.key());
        try (PreparedStatement statement = db.prepare(session.connection, "SELECT pg_advisory_unlock_shared(?, ?)")) {
            statement.setInt(1, (int) (advisory >>> 32));
            statement.setInt(2, (int) advisory);
            try (ResultSet rows = statement.executeQuery()) {
                session.marked = false;
                return rows.next() && rows.getBoolean(1);
            }
        }
    }

    /**
     * Forgets a session. A clean connection (holding nothing) is kept for a later hold; any other
     * is closed, which frees what it still holds: our own connections end their database session
     * when closed, while an application's pool keeps the session open, so there the engine first
     * asks the database to free every session lock of the connection.
     */
    private void end(Session session, boolean clean) {
        end(session, clean, false);
    }

    /** @param wokeOthers whether the release notified a waiter of another session: this engine's line holds back for it */
    private void end(Session session, boolean clean, boolean wokeOthers) {
        sessions.remove(session.attempt.token(), session);
        session.held = false;
        if (clean) {
            db.source.keepSession(session.connection);
        } else {
            if (!db.source.closeEndsSession()) {
                freeAll(session.connection);
            }
            ConnectionSource.closeQuietly(session.connection);
        }
        gate.released(session.key, session.attempt.token(), wokeOthers);
    }

    /** Frees every session lock of a connection, so that an application's pool gets it back holding none. */
    private void freeAll(Connection c) {
        try {
            switch (dialect) {
                case POSTGRESQL:
                    try (Statement statement = c.createStatement()) {
                        statement.execute("SELECT pg_advisory_unlock_all()");
                    }
                    break;
                case MARIADB:
                    try (Statement statement = c.createStatement()) {
                        statement.execute("SELECT RELEASE_ALL_LOCKS()");
                    }
                    break;
                case H2:
                    if (!c.getAutoCommit()) {
                        c.rollback();
                    }
                    break;
                default:
                    throw new AssertionError(dialect);
            }
        } catch (SQLException | RuntimeException e) {
            // a connection that fails here is broken: the pool drops it, and its session with it
            LOG.log(Level.DEBUG, "freeing the session locks of a connection of " + db.describe + " failed: " + e);
        }
    }

    private boolean alive(Session session) {
        synchronized (session) {
            try {
                return session.held && session.connection.isValid(timeoutSeconds());
            } catch (SQLException e) {
                return false;
            }
        }
    }

    private int timeoutSeconds() {
        return (int) Math.max(1, (db.timeout.toMillis() + 999) / 1000);
    }

    private void checkSessions() {
        for (Session session : sessions.values()) {
            if (session.held && !alive(session) && session.held) {
                end(session, false);
                lossReporter.lost(session.attempt.token(), "the database connection that held it closed");
            }
        }
    }

    @Override
    public boolean isLocked(LockKey key) {
        return db.run("reading lock '" + key.name() + "'", true, connection -> {
            switch (dialect) {
                case POSTGRESQL:
                    long advisory = LockRows.advisoryKey(table, key);
                    try (PreparedStatement statement = db.prepare(connection, "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' "
                            + "AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                            + "AND classid = CAST(? AS bigint)::oid AND objid = CAST(? AS bigint)::oid AND objsubid = 1")) {
                        statement.setLong(1, advisory >>> 32);
                        statement.setLong(2, advisory & 0xffffffffL);
                        try (ResultSet rows = statement.executeQuery()) {
                            return rows.next() && rows.getLong(1) > 0;
                        }
                    }
                case MARIADB:
                    try (PreparedStatement statement = db.prepare(connection, "SELECT IS_USED_LOCK(?)")) {
                        statement.setString(1, LockRows.sessionLockName(table, key));
                        try (ResultSet rows = statement.executeQuery()) {
                            return rows.next() && rows.getObject(1) != null;
                        }
                    }
                case H2:
                    return probeRowLock(connection, LockRows.key(table, key));
                default:
                    throw new AssertionError(dialect);
            }
        });
    }

    /** H2 has no view of row locks: try the row lock and give it back at once. */
    private boolean probeRowLock(Connection c, String rowKey) throws SQLException {
        c.setAutoCommit(false);
        try (PreparedStatement select = db.prepare(c, "SELECT fence FROM " + table + " WHERE lock_key = ? FOR UPDATE NOWAIT")) {
            select.setString(1, rowKey);
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return false;
            }
        } catch (SQLException e) {
            if (SqlErrors.isRetryable(e)) {
                return true;
            }
            throw e;
        } finally {
            c.rollback();
            c.setAutoCommit(true);
        }
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return idempotency;
    }

    @Override
    public void close() {
        watcher.shutdownNow();
        gate.close();
        waiting.clear();
        for (Session session : sessions.values()) {
            synchronized (session) {
                end(session, !session.held);
            }
        }
        if (listener != null) {
            listener.close();
        }
        db.source.close();
    }
}
