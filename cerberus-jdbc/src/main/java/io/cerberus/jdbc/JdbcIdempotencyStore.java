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
 */
final class JdbcIdempotencyStore implements IdempotencyStore {
    private static final long PURGE_EVERY_MS = 600_000;
    private final Db db;
    private final String table;
    private final String claimSql;
    private final String readSql;
    private final String renewSql;
    private final String completeForSql;
    private final String completeForeverSql;
    private final String releaseSql;
    private final String purgeSql;
    private final AtomicLong nextPurge = new AtomicLong(System.nanoTime());
    private final boolean createTable;
    private volatile boolean ready;
    /** Whether a PostgreSQL LISTEN connection of the engine relays other processes' notifications. */
    private final boolean listening;
    /** Whether completions and releases notify the channel (PostgreSQL). */
    private final boolean notifies;
    /** The largest result MariaDB takes in one statement, read once from the server; 0 until read. */
    private volatile int mariaDbMaxResult;

    /**
     * @param channel the engine's PostgreSQL notification channel (completions and releases notify
     *     it with the record's key), or null
     * @param listening whether the engine listens on that channel
     */
    JdbcIdempotencyStore(Db db, String lockTable, boolean createTable, String channel, boolean listening) {
        this.db = db;
        this.createTable = createTable;
        this.notifies = db.dialect == Dialect.POSTGRESQL && channel != null;
        this.listening = listening && notifies;
        this.table = tableFor(lockTable);
        String now = db.dialect.now;
        String live = "(expires_at IS NULL OR expires_at > " + now + ")";
        this.claimSql = claim(db.dialect, table, now);
        this.readSql = "SELECT completed, token, fingerprint, result, failure FROM " + table + " WHERE id_key = ? AND " + live;
        this.renewSql = "UPDATE " + table + " SET expires_at = " + now + " + ? WHERE id_key = ? AND token = ? AND completed = 0 AND expires_at > "
                + now;
        String complete = "UPDATE " + table + " SET completed = 1, result = ?, failure = ?, expires_at = ";
        String owned = " WHERE id_key = ? AND token = ? AND completed = 0 AND expires_at > " + now;
        this.completeForSql = notifying(complete + now + " + ?" + owned, channel);
        this.completeForeverSql = notifying(complete + "NULL" + owned, channel);
        this.releaseSql = notifying("DELETE FROM " + table + " WHERE id_key = ? AND token = ? AND completed = 0", channel);
        this.purgeSql = "DELETE FROM " + table + " WHERE expires_at IS NOT NULL AND expires_at < " + now + " - 60000";
    }

    /** @return the idempotency table of a lock table: its name + {@code _idem}, within 63 characters */
    static String tableFor(String lockTable) {
        int dot = lockTable.lastIndexOf('.');
        String schema = dot < 0 ? "" : lockTable.substring(0, dot + 1);
        String name = lockTable.substring(dot + 1);
        return schema + (name.length() > 58 ? name.substring(0, 58) : name) + "_idem";
    }

    /**
     * On PostgreSQL a change also notifies the engine's channel with the record's key, in the same
     * statement (delivered at commit); the statement then returns one row per changed record.
     */
    private String notifying(String change, String channel) {
        if (!notifies) {
            return change;
        }
        return "WITH changed AS (" + change + " RETURNING id_key) SELECT pg_notify('" + channel + "', id_key) FROM changed";
    }

    /** Runs a change made by {@link #notifying}: @return how many records it changed */
    private int change(PreparedStatement statement) throws SQLException {
        if (!notifies) {
            return statement.executeUpdate();
        }
        int rows = 0;
        try (ResultSet changed = statement.executeQuery()) {
            while (changed.next()) {
                rows++;
            }
        }
        return rows;
    }

    static String createTable(Dialect dialect, String table) {
        String bytes = dialect == Dialect.POSTGRESQL ? "BYTEA" : dialect == Dialect.MARIADB ? "LONGBLOB" : "BLOB";
        return "CREATE TABLE IF NOT EXISTS " + table + " (id_key VARCHAR(64) NOT NULL PRIMARY KEY, completed SMALLINT NOT NULL, "
                + "token VARCHAR(64) NOT NULL, fingerprint VARCHAR(128) NOT NULL, result " + bytes + ", failure SMALLINT NOT NULL, "
                + "expires_at BIGINT)" + (dialect == Dialect.MARIADB ? " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin" : "");
    }

    private static String claim(Dialect dialect, String table, String now) {
        String expired = "expires_at IS NOT NULL AND expires_at <= " + now;
        switch (dialect) {
            case POSTGRESQL:
                return "INSERT INTO " + table + " AS t (id_key, completed, token, fingerprint, result, failure, expires_at) "
                        + "VALUES (?, 0, ?, ?, NULL, 0, " + now + " + ?) ON CONFLICT (id_key) DO UPDATE SET completed = 0, "
                        + "token = EXCLUDED.token, fingerprint = EXCLUDED.fingerprint, result = NULL, failure = 0, "
                        + "expires_at = EXCLUDED.expires_at WHERE t.expires_at IS NOT NULL AND t.expires_at <= " + now;
            case MARIADB:
                // expires_at is assigned last, so every condition before it sees the old expiry
                String taken = "(" + expired + ")";
                return "INSERT INTO " + table + " (id_key, completed, token, fingerprint, result, failure, expires_at) "
                        + "VALUES (?, 0, ?, ?, NULL, 0, " + now + " + ?) ON DUPLICATE KEY UPDATE "
                        + "completed = IF(" + taken + ", 0, completed), token = IF(" + taken + ", VALUES(token), token), "
                        + "fingerprint = IF(" + taken + ", VALUES(fingerprint), fingerprint), result = IF(" + taken + ", NULL, result), "
                        + "failure = IF(" + taken + ", 0, failure), expires_at = IF(" + taken + ", VALUES(expires_at), expires_at)";
            case H2:
                return "MERGE INTO " + table + " t USING (VALUES (CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(64)), "
                        + "CAST(? AS VARCHAR(128)), CAST(? AS BIGINT))) AS s(id_key, token, fingerprint, lease_ms) ON t.id_key = s.id_key "
                        + "WHEN MATCHED AND t.expires_at IS NOT NULL AND t.expires_at <= " + now + " THEN UPDATE SET completed = 0, token = s.token, fingerprint = s.fingerprint, "
                        + "result = NULL, failure = 0, expires_at = " + now + " + s.lease_ms "
                        + "WHEN NOT MATCHED THEN INSERT (id_key, completed, token, fingerprint, result, failure, expires_at) "
                        + "VALUES (s.id_key, 0, s.token, s.fingerprint, NULL, 0, " + now + " + s.lease_ms)";
            default:
                throw new AssertionError(dialect);
        }
    }

    /** Creates the table at first use, when the engine may create tables and it is missing. */
    private void ready() {
        if (ready || !createTable) {
            return;
        }
        String ddl = createTable(db.dialect, table);
        db.run("creating the idempotency table " + table, true, connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.executeQuery(db.dialect.probeTable(table)).close();
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
                    statement.executeQuery(db.dialect.probeTable(table)).close();
                } catch (SQLException stillMissing) {
                    throw new SQLException("could not create the idempotency table " + table + " (" + e.getMessage()
                            + "); a DBA can create it with: " + ddl, e.getSQLState(), e.getErrorCode(), e);
                }
            }
            return null;
        });
        ready = true;
    }

    private static String key(String id) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8)));
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
                    return found.token().equals(token) && !found.completed() ? Optional.<IdempotencyRecord>empty() : record;
                }
                // expired between the claim and the read: claim again
            }
            throw new SQLException("idempotency key " + id + " kept expiring between claim and read", "40001");
        });
    }

    private void purgeNowAndThen() {
        long due = nextPurge.get();
        if (System.nanoTime() - due < 0 || !nextPurge.compareAndSet(due, System.nanoTime() + PURGE_EVERY_MS * 1_000_000)) {
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
                return Optional.of(new IdempotencyRecord(rows.getInt(1) == 1, rows.getString(2), rows.getString(3), rows.getBytes(4),
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
            try (PreparedStatement statement = db.prepare(connection, retention == null ? completeForeverSql : completeForSql)) {
                int i = 1;
                statement.setBytes(i++, result);
                statement.setInt(i++, failure ? 1 : 0);
                if (retention != null) {
                    statement.setLong(i++, retention.toMillis());
                }
                statement.setString(i++, key);
                statement.setString(i, token);
                if (change(statement) == 1) {
                    Wakeups.JVM.signal(key);
                    return true;
                }
            }
            // a retry after a lost reply finds its own completion
            Optional<IdempotencyRecord> record = read(connection, key);
            return record.isPresent() && record.get().completed() && record.get().token().equals(token);
        });
    }

    @Override
    public boolean release(String id, String token) {
        ready();
        String key = key(id);
        return db.run("releasing idempotency key " + id, true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, releaseSql)) {
                statement.setString(1, key);
                statement.setString(2, token);
                if (change(statement) == 1) {
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
        try (Wakeups.Interest interest = Wakeups.JVM.register(key)) {
            long seen = interest.version();
            Optional<IdempotencyRecord> now = read(id);
            if (now.isEmpty() || now.get().completed()) {
                return;
            }
            interest.await(seen, atMost);
        }
    }

    /**
     * @return on MariaDB/MySQL, what {@code max_allowed_packet} lets one completion carry: the
     *     driver may send the bytes escaped, up to twice as long, within the statement; elsewhere
     *     no limit below the default's (PostgreSQL's {@code bytea} and H2's {@code BLOB} take more)
     */
    @Override
    public int maxResultBytes() {
        if (db.dialect != Dialect.MARIADB) {
            return IdempotencyStore.super.maxResultBytes();
        }
        int known = mariaDbMaxResult;
        if (known == 0) {
            long packet = db.run("reading max_allowed_packet", true, connection -> {
                try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery("SELECT @@max_allowed_packet")) {
                    return row.next() ? row.getLong(1) : 16L * 1024 * 1024;
                }
            });
            known = (int) Math.max(1, Math.min(Integer.MAX_VALUE - 1024, (packet - 16 * 1024) / 2));
            mariaDbMaxResult = known;
        }
        return known;
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
