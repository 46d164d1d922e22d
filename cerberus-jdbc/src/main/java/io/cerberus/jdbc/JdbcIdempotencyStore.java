package io.cerberus.jdbc;

import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Idempotency records in a table of their own (the lock table's name + {@code _idem}): one row per
 * key (primary key = SHA-256 of the record id), with the owner's token, the payload fingerprint,
 * the result, and an expiry by the database's clock ({@code NULL}: kept for ever).
 *
 * <p>A claim is one upsert that takes the row only when it is missing or expired, then a read by
 * primary key tells who owns it. Renew, complete and release are updates (a delete) guarded by the
 * token, the IN_PROGRESS state and the expiry, so a stale attempt changes nothing. Expired rows are
 * deleted now and then (at most every ten minutes, by a claim).
 *
 * <p>A completion may instead be written on the caller's connection, in its transaction
 * ({@link #completeInTransaction}): guarded by the token and the IN_PROGRESS state but not the expiry, it
 * locks the row until that transaction ends, so a claim of another attempt waits for it and then finds
 * the record completed (committed) or its own to take (rolled back, once the lease has run out).
 */
final class JdbcIdempotencyStore implements IdempotencyStore {
    private static final long PURGE_EVERY_MS = 600_000;
    private final Db db;
    private final SqlDialect dialect;
    private final String table;
    private final String claimSql;
    private final String readSql;
    private final String renewSql;
    private final String completeForSql;
    private final String completeForeverSql;
    /** {@link #completeForSql} as the caller's transaction sends it: the token's, not the expiry's check. */
    private final String completeInForSql;
    /** {@link #completeForeverSql} as the caller's transaction sends it. */
    private final String completeInForeverSql;

    private final String releaseSql;
    private final String purgeSql;
    private final AtomicLong nextPurge = new AtomicLong(System.nanoTime());
    private final boolean createTable;
    private volatile boolean ready;
    /** Whether a LISTEN connection of the engine relays other processes' notifications (PostgreSQL). */
    private final boolean listening;

    /**
     * @param listening whether the engine listens for the notifications that completions and
     *     releases send where the database notifies ({@link SqlDialect#notifying})
     */
    JdbcIdempotencyStore(Db db, String lockTable, boolean createTable, boolean listening) {
        this.db = db;
        this.dialect = db.dialect;
        this.createTable = createTable;
        this.listening = listening;
        this.table = tableFor(lockTable);
        String now = dialect.now;
        String live = "(expires_at IS NULL OR expires_at > " + now + ")";
        this.claimSql = dialect.claimRecord(table);
        this.readSql =
                "SELECT completed, token, fingerprint, result, failure FROM " + table + " WHERE id_key = ? AND " + live;
        this.renewSql = "UPDATE " + table + " SET expires_at = " + now
                + " + ? WHERE id_key = ? AND token = ? AND completed = 0 AND expires_at > " + now;
        String complete = "UPDATE " + table + " SET completed = 1, result = ?, failure = ?, expires_at = ";
        String owned = " WHERE id_key = ? AND token = ? AND completed = 0 AND expires_at > " + now;
        this.completeForSql = dialect.notifying(complete + now + " + ?" + owned);
        this.completeForeverSql = dialect.notifying(complete + "NULL" + owned);
        String ownedStill = " WHERE id_key = ? AND token = ? AND completed = 0";
        this.completeInForSql = dialect.notifying(complete + now + " + ?" + ownedStill);
        this.completeInForeverSql = dialect.notifying(complete + "NULL" + ownedStill);
        this.releaseSql =
                dialect.notifying("DELETE FROM " + table + " WHERE id_key = ? AND token = ? AND completed = 0");
        this.purgeSql = "DELETE FROM " + table + " WHERE expires_at IS NOT NULL AND expires_at < " + now + " - 60000";
    }

    /** @return the idempotency table of a lock table: its name + {@code _idem}, within 63 characters */
    static String tableFor(String lockTable) {
        int dot = lockTable.lastIndexOf('.');
        String schema = dot < 0 ? "" : lockTable.substring(0, dot + 1);
        String name = lockTable.substring(dot + 1);
        return schema + (name.length() > 58 ? name.substring(0, 58) : name) + "_idem";
    }

    /** Creates the table at first use, when the engine may create tables and it is missing. */
    private void ready() {
        if (ready || !createTable) {
            return;
        }
        String ddl = dialect.createRecordTable(table);
        db.run("creating the idempotency table " + table, true, connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.executeQuery(SqlDialect.probeTable(table)).close();
                return null;
            } catch (SQLException missing) {
                if (SqlErrors.isConnectionFailure(missing)) {
                    throw missing;
                }
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute(ddl);
            } catch (SQLException e) {
                try (Statement statement = connection.createStatement()) {
                    statement.executeQuery(SqlDialect.probeTable(table)).close();
                } catch (SQLException stillMissing) {
                    throw new SQLException(
                            "could not create the idempotency table " + table + " (" + e.getMessage()
                                    + "); a DBA can create it with: " + ddl,
                            e.getSQLState(),
                            e.getErrorCode(),
                            e);
                }
            }
            return null;
        });
        ready = true;
    }

    private static String key(String id) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        ready();
        String key = key(id);
        purgeNowAndThen();
        return db.run("claiming idempotency key " + id, true, connection -> {
            for (int round = 0; round < 10; round++) {
                try (PreparedStatement statement = db.prepare(connection, claimSql)) {
                    statement.setString(1, key);
                    statement.setString(2, token);
                    statement.setString(3, fingerprint);
                    statement.setLong(4, lease.toMillis());
                    statement.executeUpdate();
                }
                Optional<IdempotencyRecord> record = read(connection, key);
                if (record.isPresent()) {
                    IdempotencyRecord found = record.get();
                    return found.token().equals(token) && !found.completed()
                            ? Optional.<IdempotencyRecord>empty()
                            : record;
                }
                // expired between the claim and the read: claim again
            }
            throw new SQLException("idempotency key " + id + " kept expiring between claim and read", "40001");
        });
    }

    private void purgeNowAndThen() {
        long due = nextPurge.get();
        if (System.nanoTime() - due < 0
                || !nextPurge.compareAndSet(due, System.nanoTime() + PURGE_EVERY_MS * 1_000_000)) {
            return;
        }
        try {
            db.run("purging expired idempotency records", true, connection -> {
                try (PreparedStatement statement = db.prepare(connection, purgeSql)) {
                    return statement.executeUpdate();
                }
            });
        } catch (RuntimeException e) {
            // a purge is housekeeping: the next one will do
        }
    }

    private Optional<IdempotencyRecord> read(Connection connection, String key) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, readSql)) {
            statement.setString(1, key);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return Optional.empty();
                }
                return Optional.of(new IdempotencyRecord(
                        rows.getInt(1) == 1,
                        rows.getString(2),
                        rows.getString(3),
                        rows.getBytes(4),
                        rows.getInt(5) == 1));
            }
        }
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        ready();
        return update("renewing idempotency key " + id, renewSql, lease.toMillis(), key(id), token);
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        ready();
        String key = key(id);
        return db.run("completing idempotency key " + id, true, connection -> {
            try (PreparedStatement statement =
                    db.prepare(connection, retention == null ? completeForeverSql : completeForSql)) {
                bindCompletion(statement, result, failure, retention, key, token);
                if (dialect.change(statement) == 1) {
                    Wakeups.JVM.signal(key);
                    return true;
                }
            }
            // a retry after a lost reply finds its own completion
            Optional<IdempotencyRecord> record = read(connection, key);
            return record.isPresent()
                    && record.get().completed()
                    && record.get().token().equals(token);
        });
    }

    /**
     * Sends the completion on the caller's connection, not committed; where the database notifies, the
     * notification goes at the caller's commit. Timed like the engine's own statements.
     */
    @Override
    public boolean completeInTransaction(
            Connection connection, String id, String token, byte[] result, boolean failure, Duration retention)
            throws SQLException {
        ready();
        try (PreparedStatement statement =
                db.prepareTimed(connection, retention == null ? completeInForeverSql : completeInForSql)) {
            bindCompletion(statement, result, failure, retention, key(id), token);
            return dialect.change(statement) == 1;
        }
    }

    /** Binds a completion's parameters, in the order of {@link #completeForSql} and its variants. */
    private static void bindCompletion(
            PreparedStatement statement, byte[] result, boolean failure, Duration retention, String key, String token)
            throws SQLException {
        int i = 1;
        statement.setBytes(i++, result);
        statement.setInt(i++, failure ? 1 : 0);
        if (retention != null) {
            statement.setLong(i++, retention.toMillis());
        }
        statement.setString(i++, key);
        statement.setString(i, token);
    }

    @Override
    public boolean completesInTransactions() {
        return true;
    }

    @Override
    public boolean release(String id, String token) {
        ready();
        String key = key(id);
        return db.run("releasing idempotency key " + id, true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, releaseSql)) {
                statement.setString(1, key);
                statement.setString(2, token);
                if (dialect.change(statement) == 1) {
                    Wakeups.JVM.signal(key);
                    return true;
                }
                return false;
            }
        });
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        ready();
        String key = key(id);
        return db.run("reading idempotency key " + id, true, connection -> read(connection, key));
    }

    /**
     * Waits for a completion or release of this record: in this JVM always, from other processes
     * on PostgreSQL (the engine's LISTEN connection relays their notifications).
     */
    @Override
    public void awaitChange(String id, Duration atMost) throws InterruptedException {
        String key = key(id);
        try (Wakeups.Registration registration = Wakeups.JVM.register(key)) {
            long seen = registration.version();
            Optional<IdempotencyRecord> now = read(id);
            if (now.isEmpty() || now.get().completed()) {
                return;
            }
            registration.await(seen, atMost);
        }
    }

    /**
     * @return what the database lets one completion carry ({@link SqlDialect#maxResultBytes}: on
     *     MariaDB/MySQL {@code max_allowed_packet} bounds it); elsewhere no limit below the
     *     default's (PostgreSQL's {@code bytea} and H2's {@code BLOB} take more)
     */
    @Override
    public int maxResultBytes() {
        return dialect.maxResultBytes(db, IdempotencyStore.super.maxResultBytes());
    }

    @Override
    public boolean notifiesChanges() {
        return listening;
    }

    private boolean update(String what, String sql, long millis, String key, String token) {
        return db.run(what, true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, sql)) {
                statement.setLong(1, millis);
                statement.setString(2, key);
                statement.setString(3, token);
                return statement.executeUpdate() == 1;
            }
        });
    }
}
