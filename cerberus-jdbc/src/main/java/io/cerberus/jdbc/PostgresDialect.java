package io.cerberus.jdbc;

import io.cerberus.UnsafeEngineException;
import io.cerberus.spi.Acquisition;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.postgresql.PGStatement;

/**
 * PostgreSQL. A granted acquire is one statement (an upsert {@code RETURNING} the fence); a refused
 * one then reads the row with an update that marks it wanted for
 * {@link LeaseRowEngine#WANTED_MARK_MS}, so that the holder's release notifies the engine's channel
 * ({@link #channel}, relayed by {@link PgListener}). A release notifies only when the row is marked:
 * a lock nobody else waits for is released without a notification, which costs a wake-up of every
 * listening session and a database-wide lock at commit. No wake-up is lost to the mark: the release
 * and the marking update serialise on the row, and a refusal that then reads the row free asks once
 * more at once. The release deletes the row, or leaves it free for a name released before ({@link RecentReleases}:
 * an update of unindexed columns, which PostgreSQL keeps on the row's page), or hands over in the same statement
 * ({@link HandOverRelease});
 * changes of idempotency records notify too. Session locks: {@link PostgresAdvisoryLocks}. A grant draws its
 * fence ({@code nextval}) holding a transaction lock on the key ({@link #grantLock}), so the grants of a name draw
 * in the order they commit even when another client's whole hold fits between a draw and its insert.
 *
 * <p>At start {@link PgPooling} looks for transaction pooling (PgBouncer's
 * {@code pool_mode=transaction} or {@code statement}) in front of the server. Session mode is
 * refused there: session locks would exclude nothing. Lease-row mode works, with four changes:
 * no {@code LISTEN} (it cannot hear anything there, and would leave a listening session behind
 * for other clients), so a refused acquire returns the holder's fence and waiters poll while the
 * lock changes hands, as on MariaDB; no server-side prepared statements (a named statement
 * prepared in one server session is missing, or already taken, in the next); no session setting
 * of the statement timeout (it would stay behind on a server connection others use); and one
 * warning saying so.
 */
final class PostgresDialect extends SqlDialect implements HandOverRelease {
    private static final System.Logger LOG = System.getLogger(PostgresDialect.class.getName());
    /** Whether PostgreSQL's own driver (pgjdbc) is on the class path: its statements can be kept off the server's prepared ones. */
    private static final boolean PGJDBC = pgjdbc();

    static final String NOW = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint";
    /** The notification channel of the lock table: an identifier, lower case. */
    final String channel;
    /**
     * The acquire: takes the row when it is missing, free, expired, or already this attempt's (a
     * retry), with a fence from the sequence unless it is a retry, and returns the fence of a granted
     * hold (no row: busy). A new owner starts with no wanted mark: the mark of a free row was for a
     * release that already notified, and a waiter still refused marks the row again. Parameters: key,
     * namespace, name, owner, holder, lease in ms, grant lock.
     */
    final String acquireSql;
    /**
     * The read after a refused acquire: marks the row wanted for a while and returns owner, fence,
     * milliseconds left, the mark written and the one it replaced. Parameters: mark in ms, key, key.
     */
    final String markWantedSql;
    /** {@link #releaseSql} that returns a row when released, and notifies when the row is marked wanted. Parameters: key, owner. */
    final String notifyingReleaseSql;
    /** {@link #freeSql} that returns a row and notifies as {@link #notifyingReleaseSql}. Parameters: key, owner. */
    final String notifyingFreeSql;
    /** {@link #forceReleaseSql} that returns a row when freed, and notifies as {@link #notifyingReleaseSql}. Parameters: key, fence. */
    final String notifyingForceReleaseSql;
    /**
     * {@link HandOverRelease} in one statement; the next owner's fence comes from the sequence. Parameters: next
     * owner, next holder, next lease in ms, own mark, regardless (boolean), grant lock, key, releasing owner.
     * Returns, when the releasing hold was still ours and unexpired, the new owner (null when released, the row
     * then left free for the waiter of another process) and the fence.
     */
    final String handOverSql;
    /**
     * Raises a namespace's epoch ({@link #raiseEpoch}) in one upsert that returns it. Parameters: key, namespace,
     * epoch.
     */
    final String raiseEpochSql;
    /** What {@link PgPooling} found at start; until then, that sessions last. */
    private volatile PgPooling.Finding pooling = PgPooling.Finding.SESSIONS_LAST;
    /** The warning of a transaction-pooled lease-row engine, for health checks; null when there is none. */
    private volatile String poolingWarning;

    PostgresDialect(String table) {
        super(NOW, table, "");
        this.channel = channel(table);
        // the grant lock is taken (a function in FROM) before the row is formed and its fence drawn
        this.acquireSql =
                "INSERT INTO " + table + " AS t (lock_key, namespace, name, owner, holder, fence, expires_at) "
                        + "SELECT CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(128)), CAST(? AS VARCHAR(512)), "
                        + "CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(256)), " + nextFence() + ", " + now
                        + " + CAST(? AS BIGINT) FROM pg_advisory_xact_lock(CAST(? AS BIGINT)) "
                        + "ON CONFLICT (lock_key) DO UPDATE SET "
                        + "fence = CASE WHEN t.owner = EXCLUDED.owner THEN t.fence ELSE EXCLUDED.fence END, "
                        + "wanted_until = CASE WHEN t.owner = EXCLUDED.owner THEN t.wanted_until ELSE 0 END, "
                        + "owner = EXCLUDED.owner, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at "
                        + "WHERE t.owner IS NULL OR t.owner = EXCLUDED.owner OR t.expires_at <= " + now + " "
                        + "RETURNING t.fence";
        this.markWantedSql = "UPDATE " + table + " t SET wanted_until = " + now + " + ? "
                + "FROM (SELECT wanted_until AS before FROM " + table
                + " WHERE lock_key = ? FOR UPDATE) b WHERE t.lock_key = ? "
                + "RETURNING t.owner, t.fence, t.expires_at - " + now + ", t.wanted_until, b.before";
        this.raiseEpochSql = "INSERT INTO " + table + " AS t (lock_key, namespace, name, fence, expires_at) "
                + "VALUES (?, ?, '', ?, 0) ON CONFLICT (lock_key) DO UPDATE SET fence = GREATEST(t.fence, EXCLUDED.fence) "
                + "RETURNING t.fence";
        this.notifyingReleaseSql = notifyingIfWanted(releaseSql);
        this.notifyingFreeSql = notifyingIfWanted(freeSql);
        this.notifyingForceReleaseSql = notifyingIfWanted(forceReleaseSql);
        String pass = "(t.wanted_until <= p.now OR t.wanted_until = p.mark OR p.regardless)";
        this.handOverSql =
                "WITH p AS (SELECT CAST(? AS VARCHAR(64)) AS next, CAST(? AS VARCHAR(256)) AS holder, CAST(? AS BIGINT) AS lease, "
                        + "CAST(? AS BIGINT) AS mark, CAST(? AS BOOLEAN) AS regardless, " + now
                        + " AS now FROM pg_advisory_xact_lock(CAST(? AS BIGINT))), "
                        + "moved AS (UPDATE " + table + " t SET "
                        + "owner = CASE WHEN " + pass + " THEN p.next END, "
                        + "holder = CASE WHEN " + pass + " THEN p.holder END, "
                        + "fence = CASE WHEN " + pass + " THEN " + nextFence() + " ELSE t.fence END, "
                        + "expires_at = CASE WHEN " + pass + " THEN p.now + p.lease ELSE 0 END "
                        + "FROM p WHERE t.lock_key = ? AND t.owner = ? AND t.expires_at > p.now "
                        + "RETURNING t.lock_key, t.owner, t.fence, t.wanted_until, p.now) "
                        + "SELECT owner, fence, CASE WHEN owner IS NULL AND wanted_until > now THEN pg_notify('"
                        + channel
                        + "', lock_key) END FROM moved";
    }

    @Override
    String nextFence() {
        return "nextval('" + fenceSequence + "')";
    }

    /**
     * @param key a lock's row key
     * @return the key of the transaction-scoped advisory lock a grant of that lock holds while it draws its fence:
     *     the digest's second 64 bits, so no session lock ({@link LockRows#advisoryKey}: the first 64) waits on it
     */
    static long grantLock(String key) {
        return Long.parseUnsignedLong(key.substring(16, 32), 16);
    }

    /** @return the notification channel of a lock table: an identifier, lower case */
    static String channel(String table) {
        String name = "cerberus_" + table.replace('.', '_').toLowerCase(Locale.ROOT);
        return name.length() <= 63 ? name : name.substring(0, 63);
    }

    /**
     * Looks for transaction pooling: refuses session mode there, and warns once that waiters of a
     * lease-row engine wake by their backoff.
     *
     * @throws UnsafeEngineException in session mode on transaction-pooled connections
     */
    @Override
    void checkConnections(Connection connection, ConnectionSource source, JdbcTarget target) throws SQLException {
        PgPooling.Finding found = PgPooling.probe(connection, source);
        pooling = found;
        if (found == PgPooling.Finding.UNKNOWN) {
            LOG.log(
                    Level.INFO,
                    "could not open a second connection to " + target.describe() + " to check for transaction pooling;"
                            + " taken as not transaction-pooled");
        }
        if (!found.pooledByTransaction()) {
            return;
        }
        String pooled =
                target.describe() + " is " + (found == PgPooling.Finding.STATEMENT_POOLED ? "statement" : "transaction")
                        + "-pooled (PgBouncer pool_mode=transaction or statement, or a pooler like it: the database session behind a"
                        + " connection changes between its transactions)";
        if (target.mode() == JdbcOptions.Mode.SESSION) {
            throw new UnsafeEngineException(
                    "session mode refused: " + pooled + ". A session lock belongs to a database session,"
                            + " which the pooler lends to other clients as soon as the transaction that took the lock ends: the lock would"
                            + " exclude nothing, and would not be freed when its holder dies. Use lease-row mode (the default: remove"
                            + " cerberus.mode=session), or connect directly or through a pool with pool_mode=session");
        }
        poolingWarning =
                pooled + ", so LISTEN cannot hear the releases of other processes: waiters wake by their backoff (20 ms"
                        + " doubling to 1 s; every 10 to 20 ms while the lock changes hands) instead of at once. Locks are as safe as on a direct"
                        + " connection. Connect directly or through pool_mode=session for prompt wake-ups";
        LOG.log(Level.WARNING, poolingWarning);
    }

    /** Where sessions last, the built-in pool has the server time statements. */
    @Override
    void configure(ConnectionSource source) {
        if (pooling == PgPooling.Finding.SESSIONS_LAST) {
            source.sessionsLast();
        }
    }

    /** Through transaction pooling, a statement is never prepared on the server: it would be missing from the next session. */
    @Override
    PreparedStatement adapt(PreparedStatement statement) throws SQLException {
        if (PGJDBC && pooling.pooledByTransaction() && statement.isWrapperFor(PGStatement.class)) {
            statement.unwrap(PGStatement.class).setPrepareThreshold(0);
        }
        return statement;
    }

    private static boolean pgjdbc() {
        try {
            Class.forName("org.postgresql.PGStatement", false, PostgresDialect.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    @Override
    List<String> warnings() {
        String warning = poolingWarning;
        return warning == null ? List.of() : List.of(warning);
    }

    /** Adds the column {@code wanted_until} to a table of an earlier version. */
    String addWantedColumn() {
        return "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS wanted_until BIGINT NOT NULL DEFAULT 0";
    }

    @Override
    void prepareLeaseRows(LockTable tables) throws SQLException {
        tables.ensure(createTable());
        tables.ensureWantedColumn(addWantedColumn());
        ensureFenceSequence(tables);
    }

    /** The upsert, then, when it granted nothing, the marking read: two statements only when refused. */
    @Override
    Answer acquire(Db db, Connection connection, Acquisition attempt, String key, WantedMarks marks)
            throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, acquireSql)) {
            bindAcquire(statement, attempt, key);
            statement.setLong(7, grantLock(key));
            try (ResultSet rows = statement.executeQuery()) {
                if (rows.next()) {
                    return Answer.granted(rows.getLong(1));
                }
            }
        }
        try (PreparedStatement statement = db.prepare(connection, markWantedSql)) {
            statement.setLong(1, LeaseRowEngine.WANTED_MARK_MS);
            statement.setString(2, key);
            statement.setString(3, key);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return null; // released since the upsert: ask again
                }
                marks.marked(key, rows.getLong(4), rows.getLong(5), LeaseRowEngine.WANTED_MARK_MS);
                // without notifications the line polls while the lock changes hands, so it is there when it is released
                // for all
                return readHolder(rows, attempt, pooling.pooledByTransaction() ? rows.getLong(2) : -1);
            }
        }
    }

    /** {@link #raiseEpochSql}: one statement. */
    @Override
    long raiseEpoch(Db db, Connection connection, String key, String namespace, long atLeast) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, raiseEpochSql)) {
            statement.setString(1, key);
            statement.setString(2, namespace);
            statement.setLong(3, atLeast);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /** As {@link SqlDialect#release}, by {@link #notifyingFreeSql} or {@link #notifyingReleaseSql}. */
    @Override
    boolean release(Db db, Connection connection, String key, String owner) throws SQLException {
        String sql = releaseStatement(key) == freeSql ? notifyingFreeSql : notifyingReleaseSql;
        try (PreparedStatement statement = db.prepare(connection, sql)) {
            statement.setString(1, key);
            statement.setString(2, owner);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }

    /** Sends {@link #notifyingForceReleaseSql}: the waiters of other processes that marked the row wanted wake. */
    @Override
    boolean forceRelease(Db db, Connection connection, String key, long fence) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, notifyingForceReleaseSql)) {
            statement.setString(1, key);
            statement.setLong(2, fence);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }

    /**
     * @return the freeing statement, returning a row when it frees and notifying the channel when the row was
     *     marked wanted
     */
    private String notifyingIfWanted(String update) {
        return "WITH released AS (" + update + " RETURNING lock_key, wanted_until) "
                + "SELECT CASE WHEN wanted_until > " + now + " THEN pg_notify('" + channel
                + "', lock_key) END FROM released";
    }

    @Override
    Optional<HandOverRelease> handOverRelease() {
        return Optional.of(this);
    }

    @Override
    public long releaseHandingOver(
            Db db,
            Connection connection,
            String key,
            Acquisition releasing,
            Acquisition next,
            long ownMark,
            boolean evenIfWanted)
            throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, handOverSql)) {
            statement.setString(1, next.token());
            statement.setString(2, LockRows.holder(next.holder()));
            statement.setLong(3, next.lease().toMillis());
            statement.setLong(4, ownMark);
            statement.setBoolean(5, evenIfWanted);
            statement.setLong(6, grantLock(key));
            statement.setString(7, key);
            statement.setString(8, releasing.token());
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return NOT_RELEASED;
                }
                return next.token().equals(rows.getString(1)) ? rows.getLong(2) : RELEASED;
            }
        }
    }

    /** None through transaction pooling: a LISTEN there hears nothing and stays behind on a server session others use. */
    @Override
    Optional<PgListener> notifications(ConnectionSource source) {
        if (pooling.pooledByTransaction()) {
            return Optional.empty();
        }
        return Optional.ofNullable(PgListener.start(source, channel));
    }

    @Override
    SessionLocks sessionLocks(Db db) {
        return new PostgresAdvisoryLocks(db, table, channel);
    }

    @Override
    String createRecordTable(String table) {
        return "CREATE TABLE IF NOT EXISTS " + table
                + " (id_key VARCHAR(64) NOT NULL PRIMARY KEY, completed SMALLINT NOT NULL, "
                + "token VARCHAR(64) NOT NULL, fingerprint VARCHAR(128) NOT NULL, result BYTEA, failure SMALLINT NOT NULL, "
                + "expires_at BIGINT)";
    }

    @Override
    String claimRecord(String table) {
        return "INSERT INTO " + table + " AS t (id_key, completed, token, fingerprint, result, failure, expires_at) "
                + "VALUES (?, 0, ?, ?, NULL, 0, " + now + " + ?) ON CONFLICT (id_key) DO UPDATE SET completed = 0, "
                + "token = EXCLUDED.token, fingerprint = EXCLUDED.fingerprint, result = NULL, failure = 0, "
                + "expires_at = EXCLUDED.expires_at WHERE t.expires_at IS NOT NULL AND t.expires_at <= " + now;
    }

    /** A change also notifies the channel with the record's key, in the same statement (delivered at commit), and returns one row per changed record. */
    @Override
    String notifying(String change) {
        return "WITH changed AS (" + change + " RETURNING id_key) SELECT pg_notify('" + channel
                + "', id_key) FROM changed";
    }

    @Override
    int change(PreparedStatement statement) throws SQLException {
        int rows = 0;
        try (ResultSet changed = statement.executeQuery()) {
            while (changed.next()) {
                rows++;
            }
        }
        return rows;
    }
}
