package io.cerberus.jdbc;

import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * One database's way of keeping the engine's locks: a subclass per database
 * ({@link PostgresDialect}, {@link MariaDbDialect}, {@link H2Dialect}) owns the statements that
 * differ and does what only some databases can (a hand-over in the release, notifications, renewing
 * many rows in one statement). The engines call these methods and never ask which database it is.
 *
 * <p>An instance belongs to one engine and one lock table: its statements are built once, in the
 * constructor, and prepared on the engine's connections exactly as they are used. Every statement
 * takes its values as parameters; only table names (checked by {@link JdbcTarget#checkTable}) and
 * the notification channel are spliced in. Expiries are set and judged by {@link #now}, the
 * database's clock, never the client's. Methods that take a connection send their statements on it
 * in the order their javadoc gives, and throw the driver's {@link SQLException} for
 * {@link Db#run} to judge.
 */
abstract class SqlDialect {
    /** The database's clock in milliseconds since the epoch: every expiry is set and judged by it. */
    final String now;
    /** The lock table, as the user named it. */
    final String table;
    /** Reads a lock's row: owner, fence, milliseconds left. Parameter: key. */
    final String readRowSql;
    /** Extends a hold still ours and unexpired. Parameters: lease in ms, key, owner. */
    final String renewSql;
    /** Frees a hold still ours and unexpired by deleting its row. Parameters: key, owner. */
    final String releaseSql;
    /**
     * Frees a hold still ours and unexpired, leaving its row free (no owner, expiry 0) for the next acquire of
     * the name to take by an update, or the sweep ({@link ExpiredRows}) to delete; where the sweep leaves ownerless
     * rows (H2), {@link #releaseSql}. Sent for a name released before ({@link RecentReleases}). Parameters: key, owner.
     */
    final String freeSql;
    /**
     * Frees the live hold of a key whose fence is the one given, whoever holds it (a forced
     * release), by deleting its row. Parameters: key, fence.
     */
    final String forceReleaseSql;
    /** Counts live holds of a key. Parameter: key. */
    final String isLockedSql;
    /** Lists live holds of a namespace: name, holder, fence, ms left. Parameter: namespace. */
    final String inspectSql;
    /** Reads a namespace's epoch, the fence of its epoch row ({@link LockRows#epochKey}). Parameter: key. */
    final String readEpochSql;
    /** The sequence every grant of the table's locks takes its fence from ({@link #sequenceFor}). */
    final String fenceSequence;
    /** Reads up to {@link #SWEPT_PER_STATEMENT} keys of expired or freed lock rows ({@link ExpiredRows}), without locking. */
    final String expiredKeysSql;
    /** The rows the sweep deletes: expired (or freed: expiry 0), not an epoch row (empty name), and what the dialect adds. */
    private final String sweptRows;

    /** The names this engine released lately: their next release leaves the row free. */
    private final RecentReleases recentReleases = new RecentReleases();

    /** The most rows one statement of the sweep of expired rows deletes. */
    static final int SWEPT_PER_STATEMENT = 500;

    /**
     * @param lockTable a lock table, {@code [schema.]name}
     * @return its fence sequence: the name + {@code _fence_seq}, the name cut to 53 characters so that it
     *     fits the 63 of an identifier (two tables that share their first 53 share a sequence, which
     *     keeps every name's tokens increasing all the same)
     */
    static String sequenceFor(String lockTable) {
        int dot = lockTable.lastIndexOf('.');
        String schema = dot < 0 ? "" : lockTable.substring(0, dot + 1);
        String name = lockTable.substring(dot + 1);
        return schema + (name.length() > 53 ? name.substring(0, 53) : name) + "_fence_seq";
    }

    /**
     * @param swept what else a row the sweep deletes must satisfy besides having expired and not being an
     *     epoch row: an SQL condition followed by {@code AND}, or empty (then the sweep deletes free rows, and
     *     {@link #freeSql} may leave them)
     */
    SqlDialect(String now, String table, String swept) {
        this.now = now;
        this.table = table;
        this.fenceSequence = sequenceFor(table);
        this.readRowSql = "SELECT owner, fence, expires_at - " + now + " FROM " + table + " WHERE lock_key = ?";
        this.renewSql = "UPDATE " + table + " SET expires_at = " + now
                + " + ? WHERE lock_key = ? AND owner = ? AND expires_at > " + now;
        String ours = " WHERE lock_key = ? AND owner = ? AND expires_at > " + now;
        this.releaseSql = "DELETE FROM " + table + ours;
        this.freeSql = swept.isEmpty()
                ? "UPDATE " + table + " SET owner = NULL, holder = NULL, expires_at = 0" + ours
                : releaseSql;
        this.forceReleaseSql = "DELETE FROM " + table
                + " WHERE lock_key = ? AND fence = ? AND owner IS NOT NULL AND expires_at > " + now;
        this.isLockedSql =
                "SELECT COUNT(*) FROM " + table + " WHERE lock_key = ? AND owner IS NOT NULL AND expires_at > " + now;
        this.inspectSql = "SELECT name, holder, fence, expires_at - " + now + " FROM " + table
                + " WHERE namespace = ? AND owner IS NOT NULL AND expires_at > " + now;
        this.readEpochSql = "SELECT fence FROM " + table + " WHERE lock_key = ?";
        this.sweptRows = swept + "name <> '' AND expires_at < " + now;
        this.expiredKeysSql = "SELECT lock_key FROM " + table + " WHERE " + sweptRows + " LIMIT " + SWEPT_PER_STATEMENT;
    }

    /**
     * Deletes the rows of {@code keys} keys that are still expired when deleted (a row taken again since the read
     * is left). Parameters: the keys.
     */
    final String deleteExpiredSql(int keys) {
        return "DELETE FROM " + table + " WHERE lock_key IN (" + String.join(", ", Collections.nCopies(keys, "?"))
                + ") AND " + sweptRows;
    }

    /** @return this database's expression that draws the next value of {@link #fenceSequence} */
    abstract String nextFence();

    /**
     * @param productName {@link java.sql.DatabaseMetaData#getDatabaseProductName()}
     * @param describe the engine, for the message
     * @param table the lock table
     * @return the dialect of that database, for that table
     * @throws IllegalArgumentException for a database we do not support
     */
    static SqlDialect of(String productName, String describe, String table) {
        String name = productName.toLowerCase(Locale.ROOT);
        if (name.contains("postgres")) {
            return new PostgresDialect(table);
        }
        if (name.contains("mariadb") || name.contains("mysql")) {
            return new MariaDbDialect(table);
        }
        if (name.equals("h2")) {
            return new H2Dialect(table);
        }
        throw new IllegalArgumentException("the database of " + describe + " is " + productName
                + "; the jdbc engine supports PostgreSQL, MariaDB, MySQL and H2");
    }

    // ---- the connections

    /**
     * Checks at start, on a borrowed connection and before the tables, that the connections can
     * serve the engine's mode: by default nothing. PostgreSQL looks for a pooler that lends a
     * connection's session to others between its transactions ({@link PgPooling}).
     *
     * @param connection a connection of {@code source}, in auto-commit mode
     * @param source where it came from, for the check's own connections
     * @param target the engine's URI and mode
     * @throws io.cerberus.UnsafeEngineException if the mode would not keep its guarantees on these connections
     */
    void checkConnections(Connection connection, ConnectionSource source, JdbcTarget target) throws SQLException {}

    /** Sets up the connection source by what {@link #checkConnections} found, once the connection it used is back: by default nothing. */
    void configure(ConnectionSource source) {}

    /** @return the statement, set up as these connections need it: by default as it is */
    PreparedStatement adapt(PreparedStatement statement) throws SQLException {
        return statement;
    }

    /** @return what {@link #checkConnections} found that costs the engine something, for health checks: by default nothing */
    List<String> warnings() {
        return List.of();
    }

    // ---- tables

    /** @return what follows the column list of a {@code CREATE TABLE}: storage engine, character set */
    String tableOptions() {
        return "";
    }

    /** @return the lock table's DDL, for the engine and for DBAs who create the table themselves */
    final String createTable() {
        return "CREATE TABLE IF NOT EXISTS " + table + " ("
                + "lock_key VARCHAR(64) NOT NULL PRIMARY KEY, "
                + "namespace VARCHAR(128) NOT NULL, "
                + "name VARCHAR(512) NOT NULL, "
                + "owner VARCHAR(64), "
                + "holder VARCHAR(256), "
                + "fence BIGINT NOT NULL, "
                + "expires_at BIGINT NOT NULL, "
                + "wanted_until BIGINT NOT NULL DEFAULT 0)" + tableOptions();
    }

    /** A statement that fails when {@code table} is missing. */
    static String probeTable(String table) {
        return "SELECT COUNT(*) FROM " + table + " WHERE 1 = 0";
    }

    /** Makes sure lease-row mode finds its lock table and its fence sequence, as this database's engine uses them. */
    void prepareLeaseRows(LockTable tables) throws SQLException {
        tables.ensure(createTable());
        ensureFenceSequence(tables);
    }

    /** Makes sure the lock table has its fence sequence ({@link LockTable#ensureFenceSequence}). */
    final void ensureFenceSequence(LockTable tables) throws SQLException {
        tables.ensureFenceSequence(fenceSequence, "SELECT " + nextFence(), this::createFenceSequence);
    }

    /**
     * @param start the first fence: above every fence in the table
     * @return the DDL of the fence sequence
     */
    final String createFenceSequence(long start) {
        return "CREATE SEQUENCE IF NOT EXISTS " + fenceSequence + " START WITH " + start;
    }

    /** Makes sure session mode finds what its session locks use: by default nothing. */
    void prepareSessionLocks(LockTable tables) throws SQLException {}

    // ---- lease-row mode

    /**
     * What the database answered an acquire.
     *
     * @param result granted or busy
     * @param holder on a busy answer, the holding attempt's token if read, else null
     * @param holderFence on a busy answer, the holder's fence where the line's backoff watches the
     *     lock change hands elsewhere (a database that does not notify: waiters poll), else -1
     */
    record Answer(AcquireResult result, String holder, long holderFence) {
        static Answer granted(long fence) {
            return new Answer(AcquireResult.granted(fence), null, -1);
        }

        /** @return busy for a holder with {@code left} ms of lease, to be asked again within that, not before the shortest backoff */
        static Answer busy(String holder, long left, long holderFence) {
            Duration within = Duration.ofMillis(Math.max(LeaseRowEngine.FIRST_BACKOFF.toMillis(), left));
            return new Answer(AcquireResult.busy(within, holder, holderFence), holder, holderFence);
        }

        /** @return busy with nothing known of the holder: ask again at the shortest backoff */
        static Answer busy() {
            return new Answer(AcquireResult.busy(LeaseRowEngine.FIRST_BACKOFF), null, -1);
        }
    }

    /**
     * What a lock's row says to an attempt whose acquire granted nothing, from its first three
     * columns: owner, fence, lease left in ms (on the database's clock).
     *
     * @param rows positioned on the row
     * @param holderFence the {@link Answer#holderFence} of a busy answer
     * @return granted again with the row's fence (the attempt holds: its earlier answer was lost),
     *     null (free or expired, or the attempt's own row whose fence, 0, is not drawn yet: ask again at
     *     once, which draws it), or busy naming the holder
     */
    static Answer readHolder(ResultSet rows, Acquisition attempt, long holderFence) throws SQLException {
        String owner = rows.getString(1);
        if (attempt.token().equals(owner)) {
            long fence = rows.getLong(2);
            return fence > 0 ? Answer.granted(fence) : null;
        }
        long left = rows.getLong(3);
        if (owner == null || left <= 0) {
            return null;
        }
        return Answer.busy(owner, left, holderFence);
    }

    /**
     * Sends the acquire of {@code attempt} and, when it did not say it granted, reads the row
     * (see the subclasses for the statements and what they cost).
     *
     * @param key the lock's row key
     * @param marks what this engine knows of wanted marks, told of the marks the statements write and read
     * @return the answer, or {@code null} when the acquire was refused but the row read after it
     *     is free or gone (released since): ask once more at once
     */
    abstract Answer acquire(Db db, Connection connection, Acquisition attempt, String key, WantedMarks marks)
            throws SQLException;

    /** Sets the upsert's parameters: key, namespace, name, owner, holder, lease in ms. */
    static void bindAcquire(PreparedStatement statement, Acquisition attempt, String key) throws SQLException {
        statement.setString(1, key);
        statement.setString(2, attempt.key().namespace());
        statement.setString(3, attempt.key().name());
        statement.setString(4, attempt.token());
        statement.setString(5, LockRows.holder(attempt.holder()));
        statement.setLong(6, attempt.lease().toMillis());
    }

    /**
     * Sends {@link #freeSql} for a name released before ({@link #recentReleases}), else {@link #releaseSql}.
     *
     * @return whether the hold was still ours and unexpired, and is now freed
     */
    boolean release(Db db, Connection connection, String key, String owner) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, releaseStatement(key))) {
            statement.setString(1, key);
            statement.setString(2, owner);
            return statement.executeUpdate() == 1;
        }
    }

    /**
     * @return the statement that releases a hold of {@code key}, as {@link #release} says: {@link #freeSql} or
     *     {@link #releaseSql}
     */
    final String releaseStatement(String key) {
        return recentReleases.releasedAgain(key) ? freeSql : releaseSql;
    }

    /** Sends {@link #forceReleaseSql}; @return whether a live hold had that fence, and is freed */
    boolean forceRelease(Db db, Connection connection, String key, long fence) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, forceReleaseSql)) {
            statement.setString(1, key);
            statement.setLong(2, fence);
            return statement.executeUpdate() == 1;
        }
    }

    /** @return the release that hands the lock over in the same statement, where this database has one */
    Optional<HandOverRelease> handOverRelease() {
        return Optional.empty();
    }

    /** @return a started listener for the releases of other processes, where this database notifies */
    Optional<PgListener> notifications(ConnectionSource source) {
        return Optional.empty();
    }

    /**
     * Renews two holds or more: by default one batch of {@link #renewSql}, a row count per hold.
     *
     * @param notHeld reads the rows of holds whose count the driver did not tell, and returns
     *     those no longer held
     * @return the attempts no longer held
     */
    Set<Acquisition> renewAll(
            Db db, Collection<Acquisition> attempts, Function<List<Acquisition>, Set<Acquisition>> notHeld) {
        List<Acquisition> list = new ArrayList<>(attempts);
        int[] counts = db.run("renewing " + list.size() + " locks", true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, renewSql)) {
                for (Acquisition attempt : list) {
                    statement.setLong(1, attempt.lease().toMillis());
                    statement.setString(2, LockRows.key(table, attempt.key()));
                    statement.setString(3, attempt.token());
                    statement.addBatch();
                }
                return statement.executeBatch();
            }
        });
        Set<Acquisition> lost = new HashSet<>();
        List<Acquisition> untold = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            int count = i < counts.length ? counts[i] : Statement.EXECUTE_FAILED;
            if (count == Statement.SUCCESS_NO_INFO || count == Statement.EXECUTE_FAILED) {
                untold.add(list.get(i));
            } else if (count != 1) {
                lost.add(list.get(i));
            }
        }
        lost.addAll(notHeld.apply(untold));
        return lost;
    }

    /** Reads the rows of {@code keys} locks: key, owner, milliseconds left. Parameters: the keys. */
    final String readRows(int keys) {
        return "SELECT lock_key, owner, expires_at - " + now + " FROM " + table + " WHERE lock_key IN ("
                + String.join(", ", Collections.nCopies(keys, "?")) + ")";
    }

    // ---- epochs (lease-row mode)

    /** Sends {@link #readEpochSql}: @return the namespace's epoch, 0 when its row is missing (never raised) */
    final long readEpoch(Db db, Connection connection, String key) throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, readEpochSql)) {
            statement.setString(1, key);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getLong(1) : 0;
            }
        }
    }

    /**
     * Raises a namespace's epoch to {@code atLeast} unless it is higher: the fence of its epoch row, a row of the
     * lock table that no lock has ({@link LockRows#epochKey}, name empty, never owned, expired), inserted when
     * missing. Atomic in the database and safe to repeat: the epoch only goes up.
     *
     * @param key the epoch row's key
     * @return the epoch after the raise: {@code atLeast} or more
     */
    abstract long raiseEpoch(Db db, Connection connection, String key, String namespace, long atLeast)
            throws SQLException;

    // ---- session mode

    /** @return this database's session locks, on {@code db}'s connections */
    abstract SessionLocks sessionLocks(Db db);

    // ---- idempotency records

    /** @return the DDL of the idempotency table {@code table} */
    abstract String createRecordTable(String table);

    /**
     * The claim: takes the record's row when it is missing or expired. Parameters: key, token,
     * fingerprint, lease in ms.
     */
    abstract String claimRecord(String table);

    /** @return {@code change} (an update or delete of records) as this database sends it: by default as it is */
    String notifying(String change) {
        return change;
    }

    /** Runs a change built by {@link #notifying}: @return how many records it changed */
    int change(PreparedStatement statement) throws SQLException {
        return statement.executeUpdate();
    }

    /** @return the largest result one completion may carry here, or {@code otherwise} when the database sets no lower limit */
    int maxResultBytes(Db db, int otherwise) {
        return otherwise;
    }
}
