package io.cerberus.jdbc;

import io.cerberus.spi.LockKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Session locks where the database has none of its own (H2): {@code SELECT … FOR UPDATE NOWAIT} on
 * the lock's row of the lock table, in a transaction the session keeps open while it holds; the
 * rollback releases. The row is inserted first when missing (fence 0, no owner; lease-row mode can
 * share the table). The database has no view of row locks, so {@link #isLocked} tries the row lock
 * and gives it back at once.
 */
final class RowLocks implements SessionLocks {
    private final Db db;
    private final String table;
    private final String insertSql;
    private final String lockSql;

    RowLocks(Db db, String table) {
        this.db = db;
        this.table = table;
        this.insertSql = "INSERT INTO " + table
                + " (lock_key, namespace, name, owner, holder, fence, expires_at) SELECT ?, ?, ?, NULL, NULL, 0, 0 FROM DUAL "
                + "WHERE NOT EXISTS (SELECT 1 FROM " + table + " WHERE lock_key = ?)";
        this.lockSql = "SELECT fence FROM " + table + " WHERE lock_key = ? FOR UPDATE NOWAIT";
    }

    /** Makes sure the lock's row exists, then locks it in a transaction left open. */
    @Override
    public boolean tryLock(SessionEngine.Session session) throws SQLException {
        Connection c = session.connection;
        LockKey key = session.attempt.key();
        c.setAutoCommit(true);
        try (PreparedStatement insert = db.prepare(c, insertSql)) {
            insert.setString(1, session.key);
            insert.setString(2, key.namespace());
            insert.setString(3, key.name());
            insert.setString(4, session.key);
            insert.executeUpdate();
        } catch (SQLException e) {
            if (!SqlErrors.isRetryable(e)) {
                throw e;
            }
            // inserted by someone else at the same moment: the row is there
        }
        c.setAutoCommit(false);
        try (PreparedStatement select = db.prepare(c, lockSql)) {
            select.setString(1, session.key);
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

    @Override
    public boolean release(SessionEngine.Session session, boolean quietly) throws SQLException {
        Connection c = session.connection;
        if (!c.isValid(db.timeoutSeconds())) {
            return false;
        }
        c.rollback();
        return true;
    }

    @Override
    public boolean isLocked(Connection c, LockKey key) throws SQLException {
        c.setAutoCommit(false);
        try (PreparedStatement select = db.prepare(c, lockSql)) {
            select.setString(1, LockRows.key(table, key));
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
    public void freeAll(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.rollback();
        }
    }
}
