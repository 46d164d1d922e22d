package io.cerberus.jdbc;

import io.cerberus.spi.Acquisition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * H2. The acquire is a {@code MERGE} that returns nothing, so every acquire is followed by a read
 * of the row: two statements, granted or not, and a third ({@link #drawFenceSql}) when the
 * {@code MERGE} inserted the row, whose fence is drawn only by an update of the row (which H2 locks
 * first), so a name's fences grow in the order its grants commit. No wanted marks (the column stays 0), no hand-over
 * in the release (the next thread asks), no notifications. Session locks: {@link RowLocks}, which
 * lock rows of the lock table, so session mode needs the table too; those rows have no owner, and the
 * sweep of expired rows leaves them (it removes only rows with an owner).
 */
final class H2Dialect extends SqlDialect {
    static final String NOW =
            "DATEDIFF(MILLISECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00', CURRENT_TIMESTAMP)";
    /**
     * The acquire: takes the row when it is missing, free, expired, or already this attempt's (a
     * retry), with a fence from the sequence unless it is a retry; a row it inserts has fence 0 until
     * {@link #drawFenceSql} (an insert evaluates its values before it waits for the key's lock, so a fence
     * drawn there could land below one drawn and used meanwhile). The update branch runs on the row H2
     * has locked. Parameters: key, namespace, name, owner, holder, lease in ms.
     */
    final String acquireSql;
    /** Gives the row an attempt holds and the acquire inserted its fence, and returns it. Parameters: key, owner. */
    final String drawFenceSql;
    /**
     * Raises a namespace's epoch ({@link #raiseEpoch}): a {@code MERGE} that inserts its row or raises its fence.
     * Parameters: key, namespace, epoch.
     */
    final String raiseEpochSql;

    H2Dialect(String table) {
        super(NOW, table, "owner IS NOT NULL AND ");
        this.acquireSql = "MERGE INTO " + table + " t USING (VALUES (CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(128)), "
                + "CAST(? AS VARCHAR(512)), CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(256)), CAST(? AS BIGINT))) "
                + "AS s(lock_key, namespace, name, owner, holder, lease_ms) ON t.lock_key = s.lock_key "
                + "WHEN MATCHED AND (t.owner IS NULL OR t.owner = s.owner OR t.expires_at <= " + now
                + ") THEN UPDATE SET "
                + "fence = CASE WHEN t.owner = s.owner AND t.fence > 0 THEN t.fence ELSE " + nextFence() + " END, "
                + "owner = s.owner, holder = s.holder, expires_at = " + now + " + s.lease_ms "
                + "WHEN NOT MATCHED THEN INSERT (lock_key, namespace, name, owner, holder, fence, expires_at) "
                + "VALUES (s.lock_key, s.namespace, s.name, s.owner, s.holder, 0, " + now + " + s.lease_ms)";
        this.drawFenceSql = "SELECT fence FROM FINAL TABLE (UPDATE " + table + " SET fence = " + nextFence()
                + " WHERE lock_key = ? AND owner = ? AND fence = 0)";
        this.raiseEpochSql =
                "MERGE INTO " + table + " t USING (VALUES (CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(128)), "
                        + "CAST(? AS BIGINT))) AS s(lock_key, namespace, epoch) ON t.lock_key = s.lock_key "
                        + "WHEN MATCHED AND t.fence < s.epoch THEN UPDATE SET fence = s.epoch "
                        + "WHEN NOT MATCHED THEN INSERT (lock_key, namespace, name, fence, expires_at) "
                        + "VALUES (s.lock_key, s.namespace, '', s.epoch, 0)";
    }

    @Override
    String nextFence() {
        return "NEXT VALUE FOR " + fenceSequence;
    }

    @Override
    void prepareSessionLocks(LockTable tables) throws SQLException {
        tables.ensure(createTable());
    }

    /**
     * The {@code MERGE}, then {@link #readRowSql}: the row says whether this attempt holds it; a row
     * of this attempt with fence 0 (inserted) then gets its fence from {@link #drawFenceSql}.
     */
    @Override
    Answer acquire(Db db, Connection connection, Acquisition attempt, String key, WantedMarks marks)
            throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, acquireSql)) {
            bindAcquire(statement, attempt, key);
            statement.executeUpdate();
        }
        try (PreparedStatement statement = db.prepare(connection, readRowSql)) {
            statement.setString(1, key);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return null; // released since the MERGE: ask again
                }
                if (!attempt.token().equals(rows.getString(1)) || rows.getLong(2) != 0) {
                    return readHolder(rows, attempt, -1);
                }
            }
        }
        try (PreparedStatement statement = db.prepare(connection, drawFenceSql)) {
            statement.setString(1, key);
            statement.setString(2, attempt.token());
            try (ResultSet rows = statement.executeQuery()) {
                // no row: freed or taken since the read (or drawn by a retry): ask again
                return rows.next() ? Answer.granted(rows.getLong(1)) : null;
            }
        }
    }

    /** The {@code MERGE}, then {@link #readEpochSql}: the epoch raised, or a later one. */
    @Override
    long raiseEpoch(Db db, Connection connection, String key, String namespace, long atLeast) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, raiseEpochSql)) {
            statement.setString(1, key);
            statement.setString(2, namespace);
            statement.setLong(3, atLeast);
            statement.executeUpdate();
        }
        return readEpoch(db, connection, key);
    }

    @Override
    SessionLocks sessionLocks(Db db) {
        return new RowLocks(db, table);
    }

    @Override
    String createRecordTable(String table) {
        return "CREATE TABLE IF NOT EXISTS " + table
                + " (id_key VARCHAR(64) NOT NULL PRIMARY KEY, completed SMALLINT NOT NULL, "
                + "token VARCHAR(64) NOT NULL, fingerprint VARCHAR(128) NOT NULL, result BLOB, failure SMALLINT NOT NULL, "
                + "expires_at BIGINT)";
    }

    @Override
    String claimRecord(String table) {
        return "MERGE INTO " + table + " t USING (VALUES (CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(64)), "
                + "CAST(? AS VARCHAR(128)), CAST(? AS BIGINT))) AS s(id_key, token, fingerprint, lease_ms) ON t.id_key = s.id_key "
                + "WHEN MATCHED AND t.expires_at IS NOT NULL AND t.expires_at <= " + now
                + " THEN UPDATE SET completed = 0, token = s.token, fingerprint = s.fingerprint, "
                + "result = NULL, failure = 0, expires_at = " + now + " + s.lease_ms "
                + "WHEN NOT MATCHED THEN INSERT (id_key, completed, token, fingerprint, result, failure, expires_at) "
                + "VALUES (s.id_key, 0, s.token, s.fingerprint, NULL, 0, " + now + " + s.lease_ms)";
    }
}
