package io.cerberus.jdbc;

import java.util.Locale;

/**
 * What differs between the databases: the clock expression, the table's DDL, the one-statement
 * acquire, and the session locks. Every statement takes its values as parameters; only the table
 * name (checked by {@link JdbcTarget#checkTable}) is spliced in.
 */
enum Dialect {
    POSTGRESQL("(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint", ""),
    MARIADB("(TIMESTAMPDIFF(MICROSECOND, TIMESTAMP '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)",
            " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"),
    H2("DATEDIFF(MILLISECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00', CURRENT_TIMESTAMP)", "");

    /** The database's clock in milliseconds since the epoch: every expiry is set and judged by it. */
    final String now;
    private final String tableSuffix;

    Dialect(String now, String tableSuffix) {
        this.now = now;
        this.tableSuffix = tableSuffix;
    }

    /**
     * @param productName {@link java.sql.DatabaseMetaData#getDatabaseProductName()}
     * @param describe the engine, for the message
     * @return the dialect
     * @throws IllegalArgumentException for a database we do not support
     */
    static Dialect of(String productName, String describe) {
        String name = productName.toLowerCase(Locale.ROOT);
        if (name.contains("postgres")) {
            return POSTGRESQL;
        }
        if (name.contains("mariadb") || name.contains("mysql")) {
            return MARIADB;
        }
        if (name.equals("h2")) {
            return H2;
        }
        throw new IllegalArgumentException("the database of " + describe + " is " + productName
                + "; the jdbc engine supports PostgreSQL, MariaDB, MySQL and H2");
    }

    /** @return the lock table's DDL, for the engine and for DBAs who create the table themselves */
    String createTable(String table) {
        return "CREATE TABLE IF NOT EXISTS " + table + " ("
                + "lock_key VARCHAR(64) NOT NULL PRIMARY KEY, "
                + "namespace VARCHAR(128) NOT NULL, "
                + "name VARCHAR(512) NOT NULL, "
                + "owner VARCHAR(64), "
                + "holder VARCHAR(256), "
                + "fence BIGINT NOT NULL, "
                + "expires_at BIGINT NOT NULL, "
                + "wanted_until BIGINT NOT NULL DEFAULT 0)" + tableSuffix;
    }

    /** Adds the column a table of an earlier version lacks (where it is used: {@link #usesWantedColumn}). */
    String addWantedColumn(String table) {
        // MySQL has no ADD COLUMN IF NOT EXISTS; the column is added only when a probe found it missing
        return "ALTER TABLE " + table + " ADD COLUMN " + (this == POSTGRESQL ? "IF NOT EXISTS " : "")
                + "wanted_until BIGINT NOT NULL DEFAULT 0";
    }

    /** @return whether the lease-row engine marks rows wanted, so a lock table needs the column {@code wanted_until} */
    boolean usesWantedColumn() {
        return this != H2;
    }

    /** A statement that fails when the table lacks the column {@code wanted_until}. */
    String probeWantedColumn(String table) {
        return "SELECT wanted_until FROM " + table + " WHERE 1 = 0";
    }

    /**
     * The acquire: takes the row when it is missing, free, expired, or already this attempt's (a
     * retry), bumping the fence unless it is a retry. Parameters: key, namespace, name, owner,
     * holder, lease in ms. On PostgreSQL it returns the fence of a granted hold (no row: busy), on
     * MariaDB and MySQL as its generated key (0: busy); otherwise {@link #afterAcquire} reads the
     * outcome.
     */
    String acquire(String table) {
        switch (this) {
            case POSTGRESQL:
                return "INSERT INTO " + table + " AS t (lock_key, namespace, name, owner, holder, fence, expires_at) "
                        + "VALUES (?, ?, ?, ?, ?, 1, " + now + " + ?) "
                        + "ON CONFLICT (lock_key) DO UPDATE SET "
                        + "fence = CASE WHEN t.owner = EXCLUDED.owner THEN t.fence ELSE t.fence + 1 END, "
                        + "owner = EXCLUDED.owner, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at "
                        + "WHERE t.owner IS NULL OR t.owner = EXCLUDED.owner OR t.expires_at <= " + now + " "
                        + "RETURNING t.fence";
            case MARIADB:
                // assignments run left to right and see the columns already assigned (unless
                // SIMULTANEOUS_ASSIGNMENT is on): fence and owner are judged on the old row, holder
                // and expiry on "owner is now ours", which is true in both orders exactly when taken
                // the reply carries the fence as the statement's generated key: the last call of
                // LAST_INSERT_ID(expr) in the statement sets it. The VALUES call (1, a new row's fence)
                // is overridden when the row exists: by the fence when it is taken, by 0 when refused
                String taken = "(owner IS NULL OR owner = VALUES(owner) OR expires_at <= " + now + ")";
                return "INSERT INTO " + table + " (lock_key, namespace, name, owner, holder, fence, expires_at) "
                        + "VALUES (?, ?, ?, ?, ?, LAST_INSERT_ID(1), " + now + " + ?) "
                        + "ON DUPLICATE KEY UPDATE "
                        + "fence = IF(" + taken + ", LAST_INSERT_ID(IF(owner <=> VALUES(owner), fence, fence + 1)), "
                        + "LAST_INSERT_ID(0) + fence), "
                        + "owner = IF(" + taken + ", VALUES(owner), owner), "
                        + "holder = IF(" + taken + ", VALUES(holder), holder), "
                        + "expires_at = IF(" + taken + ", VALUES(expires_at), expires_at)";
            case H2:
                return "MERGE INTO " + table + " t USING (VALUES (CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(128)), "
                        + "CAST(? AS VARCHAR(512)), CAST(? AS VARCHAR(64)), CAST(? AS VARCHAR(256)), CAST(? AS BIGINT))) "
                        + "AS s(lock_key, namespace, name, owner, holder, lease_ms) ON t.lock_key = s.lock_key "
                        + "WHEN MATCHED AND (t.owner IS NULL OR t.owner = s.owner OR t.expires_at <= " + now + ") THEN UPDATE SET "
                        + "fence = CASE WHEN t.owner = s.owner THEN t.fence ELSE t.fence + 1 END, "
                        + "owner = s.owner, holder = s.holder, expires_at = " + now + " + s.lease_ms "
                        + "WHEN NOT MATCHED THEN INSERT (lock_key, namespace, name, owner, holder, fence, expires_at) "
                        + "VALUES (s.lock_key, s.namespace, s.name, s.owner, s.holder, 1, " + now + " + s.lease_ms)";
            default:
                throw new AssertionError(this);
        }
    }

    /**
     * MariaDB and MySQL: takes a lock's row that exists and is free, expired or already this
     * attempt's, bumping the fence unless it is a retry, and returns the fence as the statement's
     * generated key ({@code LAST_INSERT_ID(fence)}); no row matched (busy, or no row yet): no key.
     * A plain {@code UPDATE} by primary key costs InnoDB less than the upsert, which first tries
     * the insert. Parameters: owner, owner, holder, lease in ms, key, owner.
     */
    String takeExisting(String table) {
        if (this != MARIADB) {
            throw new UnsupportedOperationException("built for MariaDB and MySQL only");
        }
        // assignments run left to right: the fence is judged on the old owner
        return "UPDATE " + table + " SET fence = LAST_INSERT_ID(IF(owner <=> ?, fence, fence + 1)), owner = ?, holder = ?, "
                + "expires_at = " + now + " + ? WHERE lock_key = ? AND (owner IS NULL OR owner = ? OR expires_at <= " + now + ")";
    }

    /** @return whether an acquire first tries {@link #takeExisting} */
    boolean takesExistingRowFirst() {
        return this == MARIADB;
    }

    /** @return whether {@link #acquire} returns the fence itself, as a row */
    boolean acquireReturnsFence() {
        return this == POSTGRESQL;
    }

    /** @return whether {@link #acquire} returns the fence of a granted hold as its generated key (0 or none when refused) */
    boolean acquireReturnsFenceAsKey() {
        return this == MARIADB;
    }

    /** Reads the rows of {@code keys} locks: key, owner, milliseconds left. Parameters: the keys. */
    String readRows(String table, int keys) {
        return "SELECT lock_key, owner, expires_at - " + now + " FROM " + table + " WHERE lock_key IN ("
                + String.join(", ", java.util.Collections.nCopies(keys, "?")) + ")";
    }

    /** Reads a lock's row: owner, fence, milliseconds left. Parameter: key. */
    String readRow(String table) {
        return "SELECT owner, fence, expires_at - " + now + " FROM " + table + " WHERE lock_key = ?";
    }

    /**
     * Reads a lock's row after an acquire that {@link #acquireReturnsFence} did not grant, or after
     * any acquire elsewhere: owner, fence, milliseconds left. On PostgreSQL it also marks the row
     * wanted for a while, so that the holder's release notifies, and returns the mark written and
     * the one it replaced as fourth and fifth columns; parameters: mark in ms, key, key. Elsewhere
     * it only reads; parameter: key.
     */
    String afterAcquire(String table) {
        if (this == POSTGRESQL) {
            return "UPDATE " + table + " t SET wanted_until = " + now + " + ? "
                    + "FROM (SELECT wanted_until AS before FROM " + table + " WHERE lock_key = ? FOR UPDATE) b WHERE t.lock_key = ? "
                    + "RETURNING t.owner, t.fence, t.expires_at - " + now + ", t.wanted_until, b.before";
        }
        if (this == MARIADB) {
            // the mark too: a waiter marks the row (markWanted) only when the holder is of another engine
            return "SELECT owner, fence, expires_at - " + now + ", wanted_until, wanted_until - " + now + " FROM " + table
                    + " WHERE lock_key = ?";
        }
        return readRow(table);
    }

    /** @return whether {@link #afterAcquire} reads the row's wanted mark and how long it stands, as fourth and fifth columns */
    boolean readsWantedMark() {
        return this == MARIADB;
    }

    /**
     * MariaDB and MySQL: marks a lock's row wanted for a while, unless its mark changed since it
     * was read, and returns the new mark as the statement's generated key
     * ({@code LAST_INSERT_ID}). Parameters: mark in ms, key, the mark read.
     */
    String markWanted(String table) {
        if (this != MARIADB) {
            throw new UnsupportedOperationException("built for MariaDB and MySQL only");
        }
        return "UPDATE " + table + " SET wanted_until = LAST_INSERT_ID(" + now + " + ?) WHERE lock_key = ? AND wanted_until = ?";
    }

    /** @return whether {@link #afterAcquire} marks the row wanted and takes the mark's length */
    boolean marksWanted() {
        return this == POSTGRESQL;
    }

    /** Extends a hold still ours and unexpired. Parameters: lease in ms, key, owner. */
    String renew(String table) {
        return "UPDATE " + table + " SET expires_at = " + now + " + ? WHERE lock_key = ? AND owner = ? AND expires_at > " + now;
    }

    /**
     * MariaDB and MySQL: extends {@code holds} holds with the same lease in one statement, each
     * only while still its owner's and unexpired; the row count says how many. The list of keys
     * lets the server find the rows by primary key; the pairs then pick the owners. Parameters:
     * lease in ms, the keys, then key and owner of each hold.
     */
    String renewMany(String table, int holds) {
        if (this != MARIADB) {
            throw new UnsupportedOperationException("built for MariaDB and MySQL only");
        }
        return "UPDATE " + table + " SET expires_at = " + now + " + ? WHERE lock_key IN ("
                + String.join(", ", java.util.Collections.nCopies(holds, "?")) + ") AND (lock_key, owner) IN ("
                + String.join(", ", java.util.Collections.nCopies(holds, "(?, ?)")) + ") AND expires_at > " + now;
    }

    /** @return whether renewals of many holds go as {@link #renewMany} rather than a batch of {@link #renew} */
    boolean renewsMany() {
        return this == MARIADB;
    }

    /**
     * Frees a hold still ours and unexpired, keeping the row and its fence. Parameters: key,
     * owner. On PostgreSQL it returns a row when released, and notifies the channel with the key
     * when the row is marked wanted (see {@link #afterAcquire}): only then can a client of another
     * process be waiting for the notification.
     */
    String release(String table, String channel) {
        String update = "UPDATE " + table + " SET owner = NULL, holder = NULL, expires_at = 0 "
                + "WHERE lock_key = ? AND owner = ? AND expires_at > " + now;
        if (this == POSTGRESQL) {
            return "WITH released AS (" + update + " RETURNING lock_key, wanted_until) "
                    + "SELECT CASE WHEN wanted_until > " + now + " THEN pg_notify('" + channel + "', lock_key) END FROM released";
        }
        return update;
    }

    /**
     * The release of a hold that hands the lock over, in the same statement, to a waiting attempt
     * of the same engine, with the next fence and that attempt's lease (this form is PostgreSQL's;
     * MariaDB's and MySQL's is {@link #handOverByUpdate}). It hands
     * over unless another client marked the row wanted: the row is unmarked, or marked with this
     * engine's own mark, or the engine allows one more hand-off regardless. Otherwise it releases
     * as {@link #release} does, notifying when marked. One clock reading decides it all.
     * Parameters: next owner, next holder, next lease in ms, own mark, regardless (boolean), key,
     * releasing owner. Returns, when the releasing hold was still ours and unexpired, the new
     * owner (null when released) and the fence.
     */
    String handOver(String table, String channel) {
        if (this == MARIADB) {
            return handOverByUpdate(table);
        }
        if (this != POSTGRESQL) {
            throw new UnsupportedOperationException("hand-over in one statement is built for PostgreSQL, MariaDB and MySQL only");
        }
        String pass = "(t.wanted_until <= p.now OR t.wanted_until = p.mark OR p.regardless)";
        return "WITH p AS (SELECT CAST(? AS VARCHAR(64)) AS next, CAST(? AS VARCHAR(256)) AS holder, CAST(? AS BIGINT) AS lease, "
                + "CAST(? AS BIGINT) AS mark, CAST(? AS BOOLEAN) AS regardless, " + now + " AS now), "
                + "moved AS (UPDATE " + table + " t SET "
                + "owner = CASE WHEN " + pass + " THEN p.next END, "
                + "holder = CASE WHEN " + pass + " THEN p.holder END, "
                + "fence = CASE WHEN " + pass + " THEN t.fence + 1 ELSE t.fence END, "
                + "expires_at = CASE WHEN " + pass + " THEN p.now + p.lease ELSE 0 END "
                + "FROM p WHERE t.lock_key = ? AND t.owner = ? AND t.expires_at > p.now "
                + "RETURNING t.lock_key, t.owner, t.fence, t.wanted_until, p.now) "
                + "SELECT owner, fence, CASE WHEN owner IS NULL AND wanted_until > now THEN pg_notify('" + channel
                + "', lock_key) END FROM moved";
    }

    /**
     * MariaDB and MySQL: {@link #handOver} as one {@code UPDATE}. It answers through the row count
     * (1: the releasing hold was ours and unexpired) and the generated key: the new owner's fence
     * when handed over ({@code LAST_INSERT_ID(fence + 1)}), 0 when released. No notification:
     * waiters of other processes poll. Parameters: own mark and regardless (boolean) before each
     * of the four assignments, the next owner, holder and lease in ms after the second, third and
     * fourth pair; then key, releasing owner.
     */
    private String handOverByUpdate(String table) {
        // the condition reads no column the statement assigns, so the left-to-right assignments all see the same answer
        String pass = "(wanted_until <= " + now + " OR wanted_until = ? OR ?)";
        return "UPDATE " + table + " SET "
                + "fence = IF(" + pass + ", LAST_INSERT_ID(fence + 1), LAST_INSERT_ID(0) + fence), "
                + "owner = IF(" + pass + ", ?, NULL), "
                + "holder = IF(" + pass + ", ?, NULL), "
                + "expires_at = IF(" + pass + ", " + now + " + ?, 0) "
                + "WHERE lock_key = ? AND owner = ? AND expires_at > " + now;
    }

    /** @return whether {@link #handOver} is built */
    boolean handsOver() {
        return this == POSTGRESQL || this == MARIADB;
    }

    /** Counts live holds of a key. Parameter: key. */
    String isLocked(String table) {
        return "SELECT COUNT(*) FROM " + table + " WHERE lock_key = ? AND owner IS NOT NULL AND expires_at > " + now;
    }

    /** Lists live holds of a namespace: name, holder, fence, ms left. Parameter: namespace. */
    String inspect(String table) {
        return "SELECT name, holder, fence, expires_at - " + now + " FROM " + table
                + " WHERE namespace = ? AND owner IS NOT NULL AND expires_at > " + now;
    }

    /** A statement that fails when the table is missing. */
    String probeTable(String table) {
        return "SELECT COUNT(*) FROM " + table + " WHERE 1 = 0";
    }
}
