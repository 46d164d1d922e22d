package io.cerberus.jdbc;

import io.cerberus.spi.LockKey;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * One database's session locks, for {@link SessionEngine}: locks that live with a database session
 * and that the database frees when the session ends (a client killed, a network cut, a server-side
 * idle timeout). Each lock is tried, held and released on its session's own connection, never
 * waited for in the database: a refused try answers at once. Implementations keep no state of
 * their own beyond what they note on the {@link SessionEngine.Session}; the engine calls them under
 * the session's monitor.
 *
 * <ul>
 *   <li>{@link PostgresAdvisoryLocks}: {@code pg_try_advisory_lock(bigint)}; a release notifies.
 *   <li>{@link MySqlNamedLocks}: {@code GET_LOCK(name, 0)}, MariaDB and MySQL.
 *   <li>{@link RowLocks}: {@code SELECT … FOR UPDATE NOWAIT} on the lock's row in a transaction held
 *       open (H2).
 * </ul>
 */
interface SessionLocks {
    /** @return whether the session now holds its lock */
    boolean tryLock(SessionEngine.Session session) throws SQLException;

    /**
     * Releases the session's lock.
     *
     * @param quietly release without looking for waiters elsewhere (this engine's next thread
     *     takes the lock in its turn, see {@link io.cerberus.spi.TakesTurns}); only locks that notify heed it
     * @return whether the session held the lock and released it
     */
    boolean release(SessionEngine.Session session, boolean quietly) throws SQLException;

    /**
     * Drops the wanted mark of a session that did not get the lock ({@link SessionEngine.Session#marked}).
     * Locks that never mark have nothing to drop.
     *
     * @return whether the connection is clean: it holds nothing now
     */
    default boolean dropMark(SessionEngine.Session session) throws SQLException {
        return true;
    }

    /** @return whether any session holds the lock of {@code key}, asked on a pooled connection */
    boolean isLocked(Connection connection, LockKey key) throws SQLException;

    /** Frees every session lock of a connection, so that an application's pool gets it back holding none. */
    void freeAll(Connection connection) throws SQLException;
}
