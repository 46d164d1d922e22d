package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LossReporter;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.TakesTurns;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code jdbc:} engine in session mode: the database's own session locks, each attempt on a
 * connection of its own that it keeps while it waits and while it holds.
 *
 * <p>The locks themselves are the database's ({@link SessionLocks}, chosen by the dialect): PostgreSQL's
 * advisory locks, MariaDB's and MySQL's named locks, or row locks (H2).
 *
 * <p>The database frees the lock when the connection dies (a client killed, a network cut, a
 * server-side idle timeout). A watcher checks every held connection at the session check interval
 * and reports one that died as lost, so the holder learns it then, not at unlock. The cost is one
 * connection per held lock and per attempt whose turn it is to ask; locks carry no fencing token.
 *
 * <p>The core lines up this engine's waiters per lock as in lease-row mode ({@link LinesUpLocally}):
 * only the first in line takes a connection and asks; a release here, the end of a session, or (on
 * PostgreSQL) a notification from another process wakes it (a thread, or an async waiter's callback). A
 * connection whose session holds nothing any more serves the next hold: opening one costs milliseconds,
 * a hold a round trip.
 *
 * <p>Where the database notifies (PostgreSQL: a release notifies only when a client of another
 * session was refused the lock, see {@link PostgresAdvisoryLocks}) processes take turns
 * ({@link TakesTurns}): a release within this client's turn while one of its threads waits frees
 * the lock without looking for waiters elsewhere, and a release that notified yields: the line
 * holds back for a moment, so the woken waiter elsewhere gets the lock.
 */
final class SessionEngine implements LockEngine, KeepsIdempotencyRecords, JdbcTurns, NotifiesChanges {
    private static final System.Logger LOG = System.getLogger(SessionEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(Capability.SESSION_BOUND, Capability.MULTI_PROCESS);

    private final Db db;
    private final String table;
    private final SessionLocks locks;
    private final LossReporter lossReporter;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    /** What wakes each waiting attempt early, by token, from its first ask until granted or abandoned. */
    private final Wakeups.Waiters waiters = new Wakeups.Waiters();

    private final ScheduledExecutorService watcher;
    private final PgListener listener;

    /** One attempt's connection: while it waits, then while it holds. */
    static final class Session {
        final Acquisition attempt;
        final String key;
        final Connection connection;
        /** Whether the connection served an earlier hold and waited idle since: it may have died meanwhile. */
        final boolean reused;

        volatile boolean held;
        /** Guards the connection's use and the fields below: a lock, not a monitor, since SQL runs under it. */
        final ReentrantLock guard = new ReentrantLock();
        /** Whether the session holds the key's wanted mark, where session locks mark (guarded by {@link #guard}). */
        boolean marked;
        /** Whether its release notified a waiter of another session (guarded by {@link #guard}). */
        boolean wokeOthers;

        Session(Acquisition attempt, String key, Connection connection, boolean reused) {
            this.attempt = attempt;
            this.key = key;
            this.connection = connection;
            this.reused = reused;
        }
    }

    private final JdbcIdempotencyStore idempotency;

    SessionEngine(Db db, boolean createTable, Duration checkInterval, LossReporter lossReporter) {
        this.db = db;
        this.table = db.dialect.table;
        this.locks = db.dialect.sessionLocks(db);
        this.lossReporter = lossReporter;
        this.watcher = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "cerberus-jdbc-session-check");
            thread.setDaemon(true);
            return thread;
        });
        watcher.scheduleWithFixedDelay(
                this::checkSessions, checkInterval.toMillis(), checkInterval.toMillis(), TimeUnit.MILLISECONDS);
        this.listener = db.dialect.notifications(db.source).orElse(null);
        this.idempotency = new JdbcIdempotencyStore(db, table, createTable, listener != null);
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
            return Optional.of(
                    "the database's session locks carry no number; lease-row mode (the default) has fencing tokens");
        }
        if (capability == Capability.INSPECT) {
            return Optional.of(
                    "session locks are known by digest only; lease-row mode (the default) can list its locks");
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
        waiters.asking(attempt.token(), key);
        if (session == null) {
            // only the attempt whose turn it is asks (the core's line): the others wait without a connection
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
            waiters.done(attempt.token());
            return AcquireResult.granted(-1);
        }
        return AcquireResult.busy(LeaseRowEngine.MAX_BACKOFF);
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
        session.guard.lock();
        try {
            if (locks.tryLock(session)) {
                session.held = true;
                return true;
            }
            return false;
        } catch (SQLException e) {
            end(session, false);
            Acquisition attempt = session.attempt;
            if (SqlErrors.isConnectionFailure(e)) {
                throw new EngineUnavailableException(
                        "acquiring " + attempt + " failed on " + db.describe + ": " + e.getMessage(), e);
            }
            throw new CerberusException(
                    "acquiring " + attempt + " failed on " + db.describe + ": " + e.getMessage() + " (SQLState "
                            + e.getSQLState() + ", error " + e.getErrorCode() + ")",
                    e);
        } finally {
            session.guard.unlock();
        }
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        waiters.await(attempt.token(), max);
    }

    /** An async waiter is woken by what wakes {@link #awaitChange}, through a callback ({@link Wakeups}). */
    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        return waiters.onChange(attempt.token(), wake);
    }

    /** @return how many async waiters' callbacks wait on the lock now (for tests) */
    int changeCallbacks(LockKey lock) {
        return Wakeups.JVM.callbacks(LockRows.key(table, lock));
    }

    /** Takes turns with other processes only where a release notifies them (PostgreSQL): a notification is what turns save. */
    @Override
    public <A> Optional<A> ability(Class<A> ability) {
        return ability == TakesTurns.class && listener == null ? Optional.empty() : LockEngine.super.ability(ability);
    }

    @Override
    public void abandon(Acquisition attempt) {
        waiters.done(attempt.token());
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
        return release(attempt, null, false).released();
    }

    /**
     * Releases quietly within the turn while a thread of this client sleeps first in line (see
     * {@link SessionLocks#release}); a release that woke a waiter elsewhere yields.
     */
    @Override
    public HandOff release(Acquisition attempt, Acquisition next, boolean withinTurn) {
        Session session = sessions.get(attempt.token());
        if (session == null) {
            return HandOff.notHanded(false);
        }
        boolean released = false;
        session.guard.lock();
        try {
            // a connection that never held the lock, or gave it back, holds nothing and can serve again
            boolean clean = !session.held;
            if (session.held) {
                try {
                    // quietly only while a thread of this client is there to take the lock
                    released = locks.release(session, withinTurn && next != null);
                    clean = released;
                } catch (SQLException e) {
                    LOG.log(
                            Level.DEBUG,
                            "releasing " + attempt + " on " + db.describe + " failed; ending its session frees it: "
                                    + e);
                }
            } else if (session.marked) {
                try {
                    clean = locks.dropMark(session);
                } catch (SQLException e) {
                    clean = false;
                }
            }
            end(session, clean);
        } finally {
            session.guard.unlock();
        }
        if (released) {
            Wakeups.JVM.signal(session.key);
        }
        return released && session.wokeOthers ? HandOff.yieldedToOthers() : HandOff.notHanded(released);
    }

    /**
     * Forgets a session. A clean connection (holding nothing) is kept for a later hold; any other
     * is closed, which frees what it still holds: our own connections end their database session
     * when closed, while an application's pool keeps the session open, so there the engine first
     * asks the database to free every session lock of the connection.
     */
    private void end(Session session, boolean clean) {
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
    }

    /** Frees every session lock of a connection, so that an application's pool gets it back holding none. */
    private void freeAll(Connection c) {
        try {
            locks.freeAll(c);
        } catch (SQLException | RuntimeException e) {
            // a connection that fails here is broken: the pool drops it, and its session with it
            LOG.log(Level.DEBUG, "freeing the session locks of a connection of " + db.describe + " failed: " + e);
        }
    }

    private boolean alive(Session session) {
        session.guard.lock();
        try {
            return session.held && session.connection.isValid(db.timeoutSeconds());
        } catch (SQLException e) {
            return false;
        } finally {
            session.guard.unlock();
        }
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
        return db.run("reading lock '" + key.name() + "'", true, connection -> locks.isLocked(connection, key));
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return idempotency;
    }

    @Override
    public void close() {
        watcher.shutdownNow();
        waiters.close();
        for (Session session : sessions.values()) {
            session.guard.lock();
            try {
                end(session, !session.held);
            } finally {
                session.guard.unlock();
            }
        }
        if (listener != null) {
            listener.close();
        }
        db.source.close();
    }
}
