package io.cerberus.jdbc;

import io.cerberus.spi.LockKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * MariaDB's and MySQL's named locks: {@code GET_LOCK(name, 0)} tries without waiting,
 * {@code RELEASE_LOCK} frees, {@code IS_USED_LOCK} tells whether any session holds one. The name is
 * {@link LockRows#sessionLockName}: 49 characters of the key's digest, within the limit of 64.
 * Nothing is notified: waiters of other processes poll.
 */
final class MySqlNamedLocks implements SessionLocks {
    private final Db db;
    private final String table;

    MySqlNamedLocks(Db db, String table) {
        this.db = db;
        this.table = table;
    }

    @Override
    public boolean tryLock(SessionEngine.Session session) throws SQLException {
        try (PreparedStatement statement = db.prepare(session.connection, "SELECT GET_LOCK(?, 0)")) {
            statement.setString(1, LockRows.sessionLockName(table, session.attempt.key()));
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getInt(1) == 1;
            }
        }
    }

    @Override
    public boolean release(SessionEngine.Session session, boolean quietly) throws SQLException {
        try (PreparedStatement statement = db.prepare(session.connection, "SELECT RELEASE_LOCK(?)")) {
            statement.setString(1, LockRows.sessionLockName(table, session.attempt.key()));
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getInt(1) == 1;
            }
        }
    }

    @Override
    public boolean isLocked(Connection connection, LockKey key) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, "SELECT IS_USED_LOCK(?)")) {
            statement.setString(1, LockRows.sessionLockName(table, key));
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getObject(1) != null;
            }
        }
    }

    @Override
    public void freeAll(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SELECT RELEASE_ALL_LOCKS()");
        }
    }
}
