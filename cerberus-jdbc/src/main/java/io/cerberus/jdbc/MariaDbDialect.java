package io.cerberus.jdbc;

import io.cerberus.spi.Acquisition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * MariaDB and MySQL. There is no {@code UPDATE … RETURNING}: a statement answers through its row
 * count and its generated key, which {@code LAST_INSERT_ID(expr)} sets and the driver reads from the
 * reply without a second round trip. Fences come from a {@code SEQUENCE} (MariaDB 10.3+; MySQL has
 * none, and is refused in lease-row mode), drawn only by an {@code UPDATE} of the lock's row, which
 * InnoDB locks first: a name's fences then grow in the order its grants commit. An acquire of a row
 * this engine saw and did not delete is one plain {@code UPDATE} by primary key that returns the fence
 * as that key (cheaper for InnoDB than the upsert, which first tries the insert); any other name, or a
 * row the update found gone, takes the upsert, and a row it inserted gets its fence from a second
 * {@code UPDATE} ({@link #drawFenceSql}). A refused acquire reads the row and its wanted mark, and marks it
 * ({@link #markWantedSql}) only when a hold of another engine refused it. Nobody is notified: a
 * waiter of another process polls, at the shortest backoff while it sees the lock change hands (the
 * line's backoff watches the holder's fence), so that its poll falls in this engine's hold-back. The release
 * deletes the row, or leaves it free for a name released before ({@link RecentReleases}: its next acquire is then
 * the plain {@code UPDATE}), or hands over in one {@code UPDATE} ({@link HandOverRelease}); many holds renew in one
 * statement per 500. Session locks: {@link MySqlNamedLocks}.
 *
 * <p>Assignments of an {@code UPDATE} run left to right and see the columns already assigned
 * (unless {@code SIMULTANEOUS_ASSIGNMENT} is on): every statement here judges its condition on
 * columns it assigns later, or on none it assigns.
 */
final class MariaDbDialect extends SqlDialect implements HandOverRelease {
    static final String NOW =
            "(TIMESTAMPDIFF(MICROSECOND, TIMESTAMP '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
    private static final String TABLE_OPTIONS = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
    private static final int MAX_KEYS_WITH_ROW = 65_536;
    /** Holds per statement of {@link #renewAll}. */
    private static final int HOLDS_PER_RENEWAL = 500;

    /**
     * The upsert, as {@link PostgresDialect#acquireSql} (a new owner's row has no wanted mark) but answering with
     * the fence as its generated key (0: busy, or inserted). A row it inserts has fence 0 until
     * {@link #drawFenceSql}: an {@code INSERT} evaluates its values before it waits for the key's lock (another
     * client's delete of the row not yet committed), so a fence drawn there could land below one drawn and used
     * meanwhile.
     * Parameters: key, namespace, name, owner, holder, lease in ms.
     */
    final String acquireSql;
    /**
     * Gives the row an attempt holds its fence from the sequence, unless it has one (a retry), and returns the
     * fence as the generated key. Parameters: key, owner.
     */
    final String drawFenceSql;
    /**
     * Takes a lock's row that exists and is free, expired or already this attempt's, with a fence
     * from the sequence unless it is a retry, and a new owner with no wanted mark (as {@link #acquireSql}), and
     * returns the fence as the generated key; no row matched (busy, or no row yet): no key. Parameters: owner,
     * owner, owner, holder, lease in ms, key, owner.
     */
    final String takeExistingSql;
    /** The read after a refusal: owner, fence, milliseconds left, the wanted mark and how long it stands. Parameter: key. */
    final String readMarkSql;
    /**
     * Marks a row wanted for a while unless its mark changed since it was read, and returns the new
     * mark as the generated key. Parameters: mark in ms, key, the mark read.
     */
    final String markWantedSql;
    /**
     * {@link HandOverRelease} as one {@code UPDATE}: row count 1 when the releasing hold was ours
     * and unexpired, generated key the new owner's fence when handed over, 0 when released.
     * Parameters: own mark and regardless (boolean) before each of the four assignments, the next
     * owner, holder and lease in ms after the second, third and fourth pair; then key, releasing owner.
     */
    final String handOverSql;
    /**
     * Raises a namespace's epoch ({@link #raiseEpoch}) in one upsert that answers with it as its generated key.
     * Parameters: key, namespace, epoch.
     */
    final String raiseEpochSql;
    /**
     * Keys whose row this engine has seen and not deleted, so an acquire of one of them tries the
     * plain update first, and any other goes straight to the upsert (a row deleted since, by the sweep
     * or another client, only costs the update that finds nothing). Forgotten all at once when full.
     */
    private final Set<String> keysWithRow = ConcurrentHashMap.newKeySet();
    /** The largest result one completion takes, read once from the server; 0 until read. */
    private volatile int maxResult;

    MariaDbDialect(String table) {
        super(NOW, table, "");
        // the last call of LAST_INSERT_ID(expr) in the statement sets the key: the VALUES call (0, a
        // new row's fence until drawFenceSql) is overridden when the row exists: by the fence when it
        // is taken, by 0 when refused. The update branch runs once InnoDB holds the existing row's
        // exclusive lock (the duplicate-key check of INSERT … ON DUPLICATE KEY UPDATE takes it, and
        // waits for it), so its NEXTVAL is drawn under the row's lock, like an UPDATE's. A fence of 0
        // (an insert whose draw never came) is drawn again, even by its own attempt. Fence and owner
        // are judged on the old row, holder and expiry on "owner is now ours", which is true in both
        // orders exactly when taken
        String taken = "(owner IS NULL OR owner = VALUES(owner) OR expires_at <= " + now + ")";
        this.acquireSql = "INSERT INTO " + table + " (lock_key, namespace, name, owner, holder, fence, expires_at) "
                + "VALUES (?, ?, ?, ?, ?, LAST_INSERT_ID(0), " + now + " + ?) "
                + "ON DUPLICATE KEY UPDATE "
                + "wanted_until = IF(" + taken + " AND NOT owner <=> VALUES(owner), 0, wanted_until), "
                + "fence = IF(" + taken + ", LAST_INSERT_ID(IF(owner <=> VALUES(owner) AND fence > 0, fence, "
                + nextFence() + ")), LAST_INSERT_ID(0) + fence), "
                + "owner = IF(" + taken + ", VALUES(owner), owner), "
                + "holder = IF(" + taken + ", VALUES(holder), holder), "
                + "expires_at = IF(" + taken + ", VALUES(expires_at), expires_at)";
        this.takeExistingSql = "UPDATE " + table
                + " SET wanted_until = IF(owner <=> ?, wanted_until, 0), "
                + "fence = LAST_INSERT_ID(IF(owner <=> ? AND fence > 0, fence, " + nextFence()
                + ")), owner = ?, holder = ?, "
                + "expires_at = " + now + " + ? WHERE lock_key = ? AND (owner IS NULL OR owner = ? OR expires_at <= "
                + now + ")";
        this.drawFenceSql = "UPDATE " + table + " SET fence = LAST_INSERT_ID(IF(fence = 0, " + nextFence()
                + ", fence)) WHERE lock_key = ? AND owner = ?";
        this.readMarkSql = "SELECT owner, fence, expires_at - " + now + ", wanted_until, wanted_until - " + now
                + " FROM " + table + " WHERE lock_key = ?";
        this.markWantedSql = "UPDATE " + table + " SET wanted_until = LAST_INSERT_ID(" + now
                + " + ?) WHERE lock_key = ? AND wanted_until = ?";
        // as in the acquire, the last call of LAST_INSERT_ID(expr) sets the key: the new row's epoch, or the greater
        this.raiseEpochSql = "INSERT INTO " + table + " (lock_key, namespace, name, fence, expires_at) "
                + "VALUES (?, ?, '', LAST_INSERT_ID(?), 0) "
                + "ON DUPLICATE KEY UPDATE fence = LAST_INSERT_ID(GREATEST(fence, VALUES(fence)))";
        String pass = "(wanted_until <= " + now + " OR wanted_until = ? OR ?)";
        this.handOverSql = "UPDATE " + table + " SET "
                + "fence = IF(" + pass + ", LAST_INSERT_ID(" + nextFence() + "), LAST_INSERT_ID(0) + fence), "
                + "owner = IF(" + pass + ", ?, NULL), "
                + "holder = IF(" + pass + ", ?, NULL), "
                + "expires_at = IF(" + pass + ", " + now + " + ?, 0) "
                + "WHERE lock_key = ? AND owner = ? AND expires_at > " + now;
    }

    @Override
    String tableOptions() {
        return TABLE_OPTIONS;
    }

    @Override
    String nextFence() {
        return "NEXTVAL(" + fenceSequence + ")";
    }

    /** Adds the column {@code wanted_until} to a table of an earlier version (MySQL has no {@code ADD COLUMN IF NOT EXISTS}). */
    String addWantedColumn() {
        return "ALTER TABLE " + table + " ADD COLUMN wanted_until BIGINT NOT NULL DEFAULT 0";
    }

    /** @throws IllegalArgumentException on MySQL, which has no sequence to draw fences from */
    @Override
    void prepareLeaseRows(LockTable tables) throws SQLException {
        String version = tables.serverVersion();
        if (!version.contains("MariaDB")) {
            throw new IllegalArgumentException(tables.describe() + " is MySQL " + version
                    + ", which has no sequences: lease-row mode draws its fencing tokens from one (MariaDB 10.3+,"
                    + " PostgreSQL, H2). Use cerberus.mode=session on MySQL (no fencing tokens)");
        }
        tables.ensure(createTable());
        tables.ensureWantedColumn(addWantedColumn());
        ensureFenceSequence(tables);
    }

    /**
     * The update for a row seen before, else the upsert; granted: that one statement, or the upsert
     * and {@link #drawFenceSql} when the upsert inserted the row. The update that took nothing (busy,
     * a row deleted since, or taken without the fence read back) is followed by the read only, which
     * tells which, and a missing row is asked for again by the upsert; an upsert that took nothing
     * (busy) by {@link #drawFenceSql}, which finds no row of this attempt, and the read. A refusal by a
     * hold of another engine may add {@link #markWantedSql}.
     */
    @Override
    Answer acquire(Db db, Connection connection, Acquisition attempt, String key, WantedMarks marks)
            throws SQLException {
        boolean tookNothing = false;
        if (keysWithRow.contains(key)) {
            try (PreparedStatement statement = db.prepareReturningKey(connection, takeExistingSql)) {
                statement.setString(1, attempt.token());
                statement.setString(2, attempt.token());
                statement.setString(3, attempt.token());
                statement.setString(4, LockRows.holder(attempt.holder()));
                statement.setLong(5, attempt.lease().toMillis());
                statement.setString(6, key);
                statement.setString(7, attempt.token());
                if (statement.executeUpdate() == 1) {
                    try (ResultSet keys = statement.getGeneratedKeys()) {
                        if (keys.next() && keys.getLong(1) > 0) {
                            return Answer.granted(keys.getLong(1));
                        }
                    }
                }
                tookNothing = true;
            }
        }
        if (!tookNothing) {
            try (PreparedStatement statement = db.prepareReturningKey(connection, acquireSql)) {
                bindAcquire(statement, attempt, key);
                statement.executeUpdate();
                rowSeen(key);
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    if (keys.next() && keys.getLong(1) > 0) {
                        return Answer.granted(keys.getLong(1));
                    }
                }
            }
            // inserted (fence 0), refused, or taken without the fence read back
            try (PreparedStatement statement = db.prepareReturningKey(connection, drawFenceSql)) {
                statement.setString(1, key);
                statement.setString(2, attempt.token());
                if (statement.executeUpdate() == 1) {
                    try (ResultSet keys = statement.getGeneratedKeys()) {
                        if (keys.next() && keys.getLong(1) > 0) {
                            return Answer.granted(keys.getLong(1));
                        }
                    }
                }
            }
        }
        return readAfterRefusal(db, connection, attempt, key, marks);
    }

    /** A missing row (released since the acquire) is forgotten and asked for again. */
    private Answer readAfterRefusal(Db db, Connection connection, Acquisition attempt, String key, WantedMarks marks)
            throws SQLException {
        try (PreparedStatement statement = db.prepare(connection, readMarkSql)) {
            statement.setString(1, key);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    // deleted since (swept, or force-released): ask again, by the upsert
                    keysWithRow.remove(key);
                    return null;
                }
                long fence = rows.getLong(2);
                // a fence of 0 is no holder's token: one whose draw has not come yet
                Answer answer = readHolder(rows, attempt, fence > 0 ? fence : -1);
                if (answer == null || answer.holder() == null) {
                    return answer; // granted again, or free
                }
                long mark = rows.getLong(4);
                long markLeft = rows.getLong(5);
                if (!marks.holds(answer.holder())
                        && (mark != marks.ownMark(key) || markLeft < LeaseRowEngine.WANTED_MARK_MS / 2)) {
                    markWanted(db, connection, key, mark, marks);
                } else if (markLeft > 0 && mark != marks.ownMark(key)) {
                    // held here, and marked by another client: its turn comes when this engine's turn is over
                    marks.othersMarked(key, markLeft);
                }
                return answer;
            }
        }
    }

    /**
     * Marks the row wanted after a refusal by a hold of another engine, which then stops handing
     * the lock to its own threads. A hold of this engine needs no mark: this engine's line hands it
     * on. This engine's own mark that stands for more than half its length is left as it is, so a
     * waiter polling every second writes about once in {@link LeaseRowEngine#WANTED_MARK_MS} / 2;
     * any other mark is replaced, since it may be the holder's own (written while it waited), which
     * does not stop the holder's hand-offs.
     *
     * @param read the row's mark as the refusal read it
     */
    private void markWanted(Db db, Connection connection, String key, long read, WantedMarks marks)
            throws SQLException {
        try (PreparedStatement statement = db.prepareReturningKey(connection, markWantedSql)) {
            statement.setLong(1, LeaseRowEngine.WANTED_MARK_MS);
            statement.setString(2, key);
            statement.setLong(3, read);
            if (statement.executeUpdate() == 1) {
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    if (keys.next()) {
                        marks.marked(key, keys.getLong(1), read, LeaseRowEngine.WANTED_MARK_MS);
                        return;
                    }
                }
            }
        }
        // marked by another client since the read (or the mark not read back): a mark of another client stands
        marks.othersMarked(key, LeaseRowEngine.WANTED_MARK_MS);
    }

    /**
     * {@link #raiseEpochSql}: one statement; when the driver does not give the epoch back as the generated key (a row
     * left as it was may answer without one), {@link #readEpochSql} after it, which reads the raised epoch or a later
     * one.
     */
    @Override
    long raiseEpoch(Db db, Connection connection, String key, String namespace, long atLeast) throws SQLException {
        try (PreparedStatement statement = db.prepareReturningKey(connection, raiseEpochSql)) {
            statement.setString(1, key);
            statement.setString(2, namespace);
            statement.setLong(3, atLeast);
            statement.executeUpdate();
            try (ResultSet keys = statement.getGeneratedKeys()) {
                if (keys.next() && keys.getLong(1) >= atLeast) {
                    return keys.getLong(1);
                }
            }
        }
        return readEpoch(db, connection, key);
    }

    /**
     * Deletes the row, which this engine then forgets (its next acquire of the name goes straight to the upsert),
     * or leaves it free for a name released before ({@link RecentReleases}), which this engine's next acquire takes by
     * {@link #takeExistingSql}.
     */
    @Override
    boolean release(Db db, Connection connection, String key, String owner) throws SQLException {
        String sql = releaseStatement(key);
        try (PreparedStatement statement = db.prepare(connection, sql)) {
            statement.setString(1, key);
            statement.setString(2, owner);
            boolean released = statement.executeUpdate() == 1;
            return sql == freeSql ? released : forgetIf(released, key);
        }
    }

    /** Deletes the row, which this engine then forgets: its next acquire of the name goes straight to the upsert. */
    @Override
    boolean forceRelease(Db db, Connection connection, String key, long fence) throws SQLException {
        return forgetIf(super.forceRelease(db, connection, key, fence), key);
    }

    private boolean forgetIf(boolean deleted, String key) {
        if (deleted) {
            keysWithRow.remove(key);
        }
        return deleted;
    }

    /** Notes that a lock's row exists (after an upsert it always does), for {@link #keysWithRow}. */
    private void rowSeen(String key) {
        if (keysWithRow.size() >= MAX_KEYS_WITH_ROW) {
            keysWithRow.clear();
        }
        keysWithRow.add(key);
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
        try (PreparedStatement statement = db.prepareReturningKey(connection, handOverSql)) {
            // the condition's two parameters come before each assignment's own value
            int index = passIf(statement, 1, ownMark, evenIfWanted); // fence
            index = passIf(statement, index, ownMark, evenIfWanted);
            statement.setString(index++, next.token());
            index = passIf(statement, index, ownMark, evenIfWanted);
            statement.setString(index++, LockRows.holder(next.holder()));
            index = passIf(statement, index, ownMark, evenIfWanted);
            statement.setLong(index++, next.lease().toMillis());
            statement.setString(index++, key);
            statement.setString(index, releasing.token());
            if (statement.executeUpdate() != 1) {
                return NOT_RELEASED;
            }
            try (ResultSet keys = statement.getGeneratedKeys()) {
                return keys.next() && keys.getLong(1) > 0 ? keys.getLong(1) : RELEASED;
            }
        }
    }

    /** Sets the hand-over condition's parameters (own mark, regardless) at {@code index}; @return the next index */
    private static int passIf(PreparedStatement statement, int index, long ownMark, boolean evenIfWanted)
            throws SQLException {
        statement.setLong(index, ownMark);
        statement.setBoolean(index + 1, evenIfWanted);
        return index + 2;
    }

    /**
     * Extends {@code holds} holds with the same lease in one statement, each only while still its
     * owner's and unexpired; the row count says how many. The list of keys lets the server find the
     * rows by primary key; the pairs then pick the owners. Parameters: lease in ms, the keys, then
     * key and owner of each hold.
     */
    String renewManySql(int holds) {
        return "UPDATE " + table + " SET expires_at = " + now + " + ? WHERE lock_key IN ("
                + String.join(", ", Collections.nCopies(holds, "?")) + ") AND (lock_key, owner) IN ("
                + String.join(", ", Collections.nCopies(holds, "(?, ?)")) + ") AND expires_at > " + now;
    }

    /**
     * Renews holds {@link #HOLDS_PER_RENEWAL} at a time, one {@link #renewManySql} statement for
     * each (holds grouped by lease). A statement whose row count falls short is followed by a read
     * of its rows to learn which holds are gone. A batch of single-row updates cost the server about
     * 15,000 statements a second for 10,000 holds on a 2-s lease, and fell behind the leases when
     * the server was busy (PERFORMANCE.md, held locks).
     */
    @Override
    Set<Acquisition> renewAll(
            Db db, Collection<Acquisition> attempts, Function<List<Acquisition>, Set<Acquisition>> notHeld) {
        Map<Long, List<Acquisition>> byLease = new LinkedHashMap<>();
        for (Acquisition attempt : attempts) {
            byLease.computeIfAbsent(attempt.lease().toMillis(), lease -> new ArrayList<>())
                    .add(attempt);
        }
        Set<Acquisition> lost = new HashSet<>();
        for (Map.Entry<Long, List<Acquisition>> group : byLease.entrySet()) {
            List<Acquisition> list = group.getValue();
            for (int from = 0; from < list.size(); from += HOLDS_PER_RENEWAL) {
                List<Acquisition> chunk = list.subList(from, Math.min(list.size(), from + HOLDS_PER_RENEWAL));
                int renewed = db.run("renewing " + chunk.size() + " locks", true, connection -> {
                    try (PreparedStatement statement = db.prepare(connection, renewManySql(chunk.size()))) {
                        int index = 1;
                        statement.setLong(index++, group.getKey());
                        for (Acquisition attempt : chunk) {
                            statement.setString(index++, LockRows.key(table, attempt.key()));
                        }
                        for (Acquisition attempt : chunk) {
                            statement.setString(index++, LockRows.key(table, attempt.key()));
                            statement.setString(index++, attempt.token());
                        }
                        return statement.executeUpdate();
                    }
                });
                if (renewed != chunk.size()) {
                    lost.addAll(notHeld.apply(chunk));
                }
            }
        }
        return lost;
    }

    @Override
    SessionLocks sessionLocks(Db db) {
        return new MySqlNamedLocks(db, table);
    }

    @Override
    String createRecordTable(String table) {
        return "CREATE TABLE IF NOT EXISTS " + table
                + " (id_key VARCHAR(64) NOT NULL PRIMARY KEY, completed SMALLINT NOT NULL, "
                + "token VARCHAR(64) NOT NULL, fingerprint VARCHAR(128) NOT NULL, result LONGBLOB, failure SMALLINT NOT NULL, "
                + "expires_at BIGINT)" + TABLE_OPTIONS;
    }

    @Override
    String claimRecord(String table) {
        // expires_at is assigned last, so every condition before it sees the old expiry
        String taken = "(expires_at IS NOT NULL AND expires_at <= " + now + ")";
        return "INSERT INTO " + table + " (id_key, completed, token, fingerprint, result, failure, expires_at) "
                + "VALUES (?, 0, ?, ?, NULL, 0, " + now + " + ?) ON DUPLICATE KEY UPDATE "
                + "completed = IF(" + taken + ", 0, completed), token = IF(" + taken + ", VALUES(token), token), "
                + "fingerprint = IF(" + taken + ", VALUES(fingerprint), fingerprint), result = IF(" + taken
                + ", NULL, result), "
                + "failure = IF(" + taken + ", 0, failure), expires_at = IF(" + taken
                + ", VALUES(expires_at), expires_at)";
    }

    /**
     * @return what {@code max_allowed_packet} lets one completion carry: the driver may send the
     *     bytes escaped, up to twice as long, within the statement
     */
    @Override
    int maxResultBytes(Db db, int otherwise) {
        int known = maxResult;
        if (known == 0) {
            long packet = db.run("reading max_allowed_packet", true, connection -> {
                try (Statement statement = connection.createStatement();
                        ResultSet row = statement.executeQuery("SELECT @@max_allowed_packet")) {
                    return row.next() ? row.getLong(1) : 16L * 1024 * 1024;
                }
            });
            known = (int) Math.max(1, Math.min(Integer.MAX_VALUE - 1024, (packet - 16 * 1024) / 2));
            maxResult = known;
        }
        return known;
    }
}
