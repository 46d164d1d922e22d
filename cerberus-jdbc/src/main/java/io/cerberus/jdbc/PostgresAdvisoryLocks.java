package io.cerberus.jdbc;

import io.cerberus.spi.LockKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * PostgreSQL's advisory locks: {@code pg_try_advisory_lock(bigint)} with the first 64 bits of the
 * key's digest ({@link LockRows#advisoryKey}).
 *
 * <p>A release notifies the engine's channel only when a client was refused the lock: a refused
 * try marks the key wanted, in the same statement, with a shared advisory lock on the key's two-int
 * form (a key space apart from the single-bigint keys of the locks), held while its session waits
 * ({@link SessionEngine.Session#marked}). A release frees the lock first, then tries that mark
 * exclusively: it is refused exactly when a waiter of another session holds it, and only then
 * notifies. A waiter marks before it tries again, so a release after that try sees the mark. A
 * release within this engine's turn frees the lock without the check or a notification.
 */
final class PostgresAdvisoryLocks implements SessionLocks {
    /**
     * The try: takes the lock, or when refused marks the key wanted and tries once more (a release
     * between the two tries did not see the mark). The subqueries fix the order. Parameters: key,
     * wanted mark (two ints), key. Returns: marked, granted.
     */
    static final String TRY_OR_MARK = "SELECT marked, CASE WHEN got THEN true WHEN marked THEN pg_try_advisory_lock(?) "
            + "ELSE false END FROM (SELECT got, CASE WHEN got THEN false ELSE pg_try_advisory_lock_shared(?, ?) END AS marked "
            + "FROM (SELECT pg_try_advisory_lock(?) AS got OFFSET 0) tried OFFSET 0) marking";
    /** The try of a session already marked. Parameter: key. */
    static final String TRY = "SELECT pg_try_advisory_lock(?)";
    /** The release within a turn: frees the lock, notifies nobody. Parameter: key. Returns: released. */
    static final String RELEASE_QUIETLY = "SELECT pg_advisory_unlock(?)";
    /** {@link #RELEASE_QUIETLY} that also drops the session's own wanted mark. Parameters: key, own mark (two ints). */
    static final String RELEASE_QUIETLY_MARKED = "SELECT pg_advisory_unlock(?), pg_advisory_unlock_shared(?, ?)";
    /** Drops the wanted mark. Parameters: the mark (two ints). Returns: whether it was held. */
    static final String UNMARK = "SELECT pg_advisory_unlock_shared(?, ?)";
    /** Whether any session holds the lock. Parameters: the key's high and low 32 bits. */
    static final String IS_LOCKED = "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' "
            + "AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            + "AND classid = CAST(? AS bigint)::oid AND objid = CAST(? AS bigint)::oid AND objsubid = 1";

    private final Db db;
    private final String table;
    private final String release;
    private final String releaseMarked;

    PostgresAdvisoryLocks(Db db, String table, String channel) {
        this.db = db;
        this.table = table;
        this.release = release(channel, false);
        this.releaseMarked = release(channel, true);
    }

    /**
     * The release: frees the lock, then notifies the channel with the row key when a waiter of
     * another session holds the key's wanted mark, and drops this session's own mark if it has one.
     * Parameters: wanted mark (two ints), row key, [own mark (two ints)], key. Returns: released,
     * notified.
     *
     * @param channel the notification channel
     * @param marked whether the releasing session holds the wanted mark itself
     * @return the statement
     */
    static String release(String channel, boolean marked) {
        return "SELECT released, CASE WHEN NOT released THEN false WHEN pg_try_advisory_xact_lock(?, ?) THEN false "
                + "ELSE pg_notify('" + channel + "', ?) IS NOT NULL END"
                + (marked ? ", pg_advisory_unlock_shared(?, ?)" : "")
                + " FROM (SELECT pg_advisory_unlock(?) AS released OFFSET 0) unlocked";
    }

    @Override
    public boolean tryLock(SessionEngine.Session session) throws SQLException {
        long advisory = LockRows.advisoryKey(table, session.attempt.key());
        if (session.marked) {
            try (PreparedStatement statement = db.prepare(session.connection, TRY)) {
                statement.setLong(1, advisory);
                try (ResultSet rows = statement.executeQuery()) {
                    return rows.next() && rows.getBoolean(1);
                }
            }
        }
        try (PreparedStatement statement = db.prepare(session.connection, TRY_OR_MARK)) {
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
    }

    @Override
    public boolean release(SessionEngine.Session session, boolean quietly) throws SQLException {
        Connection c = session.connection;
        long advisory = LockRows.advisoryKey(table, session.attempt.key());
        if (quietly) {
            try (PreparedStatement statement =
                    db.prepare(c, session.marked ? RELEASE_QUIETLY_MARKED : RELEASE_QUIETLY)) {
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
        try (PreparedStatement statement = db.prepare(c, session.marked ? releaseMarked : release)) {
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
    }

    @Override
    public boolean dropMark(SessionEngine.Session session) throws SQLException {
        long advisory = LockRows.advisoryKey(table, session.attempt.key());
        try (PreparedStatement statement = db.prepare(session.connection, UNMARK)) {
            statement.setInt(1, (int) (advisory >>> 32));
            statement.setInt(2, (int) advisory);
            try (ResultSet rows = statement.executeQuery()) {
                session.marked = false;
                return rows.next() && rows.getBoolean(1);
            }
        }
    }

    @Override
    public boolean isLocked(Connection connection, LockKey key) throws SQLException {
        long advisory = LockRows.advisoryKey(table, key);
        try (PreparedStatement statement = db.prepare(connection, IS_LOCKED)) {
            statement.setLong(1, advisory >>> 32);
            statement.setLong(2, advisory & 0xffffffffL);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getLong(1) > 0;
            }
        }
    }

    @Override
    public void freeAll(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SELECT pg_advisory_unlock_all()");
        }
    }
}
