package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.RenewsInBatches;
import java.lang.System.Logger.Level;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code jdbc:} engine in lease-row mode.
 *
 * <p><b>Recipe.</b> One row per lock (key = a digest of table, namespace and name; see
 * {@link LockRows}) with the owner's token, a fence and an expiry in milliseconds of the
 * <em>database's</em> clock. Acquire is one atomic upsert ({@link Dialect#acquire}) that takes the
 * row only when it is missing, free, expired, or already this attempt's, and bumps the fence unless
 * it is a retry of this attempt. Renew and release are updates guarded by the owner's token and
 * the expiry; release keeps the row and its fence, so fencing tokens of a name only grow.
 *
 * <p><b>Waiting.</b> The waiters of this engine line up per key in the JVM ({@link LocalGate}):
 * only the first in line asks the database; the others answer busy without a statement and wait
 * for their turn (first come, first served), which comes at once when the head is granted, gives
 * up or fails. When the head was granted, the next one does not ask until that hold is released
 * here (or its lease has run out), since the release wakes it; when the database answers busy
 * with a holder of this engine, likewise. Otherwise the head backs off with jitter (20 ms doubling
 * up to 1 s, never past the holder's remaining lease) and is woken early by a release in this JVM
 * ({@link Wakeups}) or, on PostgreSQL, by the notification that a release sends on a channel that
 * each engine listens on ({@link PgListener}): a release in another process is seen as before.
 * A release notifies only when the row is marked wanted: a refused acquire on PostgreSQL reads the
 * row with an update that marks it for {@link #WANTED_MARK_MS} of the database's clock, and the
 * waiting engine renews the mark at every ask. So a lock nobody else waits for is released without
 * a notification, which costs a wake-up of every listening session and of its client and a
 * database-wide lock at commit. No wake-up is lost to the mark: the release and the marking update
 * serialise on the row, and a refused acquire that then reads the row free asks once more at once.
 * The line only chooses who asks; the upsert alone decides who holds.
 *
 * <p><b>Hand-off on PostgreSQL and MariaDB.</b> When the head of the line sleeps waiting for the hold being
 * released, the release hands the lock over to it in the same statement ({@link Dialect#handOver}):
 * owner, holder, lease and the next fence are written in place of the release, and the head takes
 * the grant without a statement, its lease counted from the release. The statement hands over only
 * while no client of another process has marked the row wanted (this engine's own mark does not
 * count), or within this engine's turn ({@link LocalGate#TURN_MS}); otherwise it releases and
 * notifies as a plain release does, and this engine's line holds back a moment, so that the
 * waiter elsewhere takes the lock. On MariaDB the statement is an {@code UPDATE} that says through its row count
 * whether the hold was ours and through its generated key ({@code LAST_INSERT_ID}) the new fence;
 * there a refused acquire marks the row only when another client holds it ({@link #markWanted}),
 * and a waiter elsewhere is not notified but polls, at the shortest backoff while it sees the
 * lock change hands, so that its poll falls in the hold-back (see {@link LocalGate}). H2 has
 * neither; there the next thread asks.
 *
 * <p><b>Costs.</b> Acquire granted: one statement on PostgreSQL and MariaDB (see {@link #ask}),
 * an upsert and a read on H2; a busy answer: the acquire and a read (on PostgreSQL the marking
 * update; on MariaDB now and then a marking update more). Release: one statement. So a hand-off
 * between threads of one JVM costs one statement on PostgreSQL and MariaDB, and one acquire and
 * one release on H2, however many threads wait. A waiter that gives up
 * before its turn sends nothing. Renewals of many holds: one batch. The engine works on its own
 * pooled connections in auto-commit mode, outside any transaction of the application.
 */
final class LeaseRowEngine implements LockEngine, RenewsInBatches, Inspects, KeepsIdempotencyRecords {
    private static final System.Logger LOG = System.getLogger(LeaseRowEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(Capability.FENCING, Capability.MULTI_PROCESS, Capability.INSPECT);
    private static final long MIN_BACKOFF_MS = LocalGate.MIN_BACKOFF_MS;
    private static final int KNOWN_ROWS = 65_536;
    /** Keys per read when renewals are checked by reading their rows. */
    private static final int ROWS_PER_READ = 500;
    /**
     * How long a refused acquire marks a PostgreSQL row wanted. An engine with a waiter asks again
     * at least every {@link LocalGate#MAX_BACKOFF_MS} and renews the mark each time, so five of
     * those keep it standing between asks with room to spare; a mark that lapses anyway only
     * leaves a waiter of another process to its backoff.
     */
    static final long WANTED_MARK_MS = 5 * LocalGate.MAX_BACKOFF_MS;

    private final Db db;
    private final Dialect dialect;
    private final String table;
    private final String channel;
    private final String acquireSql;
    private final String takeExistingSql;
    private final String afterAcquireSql;
    private final String readRowSql;
    private final String renewSql;
    private final String releaseSql;
    /** The release that hands the lock to the next waiter of this engine; null where not built (H2). */
    private final String handOverSql;
    /** MariaDB: the update that marks a row wanted after a refusal read its mark; null elsewhere. */
    private final String markWantedSql;
    private final String isLockedSql;
    private final String inspectSql;
    /** The local line of each waiting attempt, by token, from its first try until granted or abandoned. */
    private final Map<String, LocalGate.Ticket> waiting = new ConcurrentHashMap<>();
    /**
     * MariaDB: keys whose row this engine has seen, so an acquire of one of them tries the plain
     * update first, and one of a name never seen goes straight to the upsert (a row deleted since
     * only costs the update that finds nothing). Forgotten all at once when full.
     */
    private final Set<String> knownRows = ConcurrentHashMap.newKeySet();
    private final LocalGate gate;
    private final PgListener listener;

    private final JdbcIdempotencyStore idempotency;

    LeaseRowEngine(Db db, String table, boolean createTable) {
        this.db = db;
        this.dialect = db.dialect;
        this.table = table;
        this.channel = channel(table);
        this.acquireSql = dialect.acquire(table);
        this.takeExistingSql = dialect.takesExistingRowFirst() ? dialect.takeExisting(table) : null;
        this.afterAcquireSql = dialect.afterAcquire(table);
        this.readRowSql = dialect.readRow(table);
        this.renewSql = dialect.renew(table);
        this.releaseSql = dialect.release(table, channel);
        this.handOverSql = dialect.handsOver() ? dialect.handOver(table, channel) : null;
        this.markWantedSql = dialect.readsWantedMark() ? dialect.markWanted(table) : null;
        this.isLockedSql = dialect.isLocked(table);
        this.inspectSql = dialect.inspect(table);
        this.listener = dialect == Dialect.POSTGRESQL ? PgListener.start(db.source, channel) : null;
        this.gate = new LocalGate(LocalGate.STALE_HEAD_NANOS, dialect.handsOver() ? Duration.ofMillis(LocalGate.TURN_MS) : null);
        this.idempotency = new JdbcIdempotencyStore(db, table, createTable, channel, listener != null);
    }

    /** @return the PostgreSQL notification channel of a table: an identifier, lower case */
    static String channel(String table) {
        String name = "cerberus_" + table.replace('.', '_').toLowerCase(java.util.Locale.ROOT);
        return name.length() <= 63 ? name : name.substring(0, 63);
    }

    @Override
    public String describe() {
        return db.describe;
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<String> whyNot(Capability capability) {
        if (capability == Capability.SESSION_BOUND) {
            return Optional.of("lease-row mode keeps locks as rows with an expiry; add cerberus.mode=session to the URI for "
                    + "the database's session locks");
        }
        return Optional.empty();
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        LocalGate.Ticket pending = waiting.get(attempt.token());
        if (pending != null) {
            AcquireResult handed = pending.handedGrant();
            if (handed != null) {
                // the holder's release gave this attempt the lock: nothing to send
                waiting.remove(attempt.token());
                return handed;
            }
        }
        if (gate.holds(attempt.token())) {
            // a repeat of a granted attempt is answered by the database, whoever waits in line
            AcquireResult repeated = ask(attempt, key).result;
            if (repeated instanceof AcquireResult.Busy) {
                // its hold is gone (expired, taken over): from its next try on it waits in line
                gate.released(key, attempt.token());
            }
            return repeated;
        }
        LocalGate.Ticket ticket = pending != null ? pending : waiting.computeIfAbsent(attempt.token(), token -> gate.enter(key, attempt));
        try {
            AcquireResult.Busy notAsked = ticket.busyUnlessTurn();
            if (notAsked != null) {
                return notAsked;
            }
            Answer answer = ask(attempt, key);
            if (answer.result instanceof AcquireResult.Granted) {
                waiting.remove(attempt.token());
                ticket.granted(attempt.token(), attempt.lease());
            } else {
                // MariaDB: no notification, so the head polls soon while the lock changes hands elsewhere
                ticket.busy(answer.owner, ((AcquireResult.Busy) answer.result).retryWithin(), dialect.readsWantedMark() ? answer.fence : -1);
            }
            return answer.result;
        } finally {
            ticket.endTry();
        }
    }

    /** What the database answered: granted or busy, and on a busy answer the holder and its fence if read (else -1). */
    private record Answer(AcquireResult result, String owner, long fence) {
        Answer(AcquireResult result) {
            this(result, null, -1);
        }
    }

    /**
     * Sends the acquire: one statement on PostgreSQL and MariaDB when granted (on MariaDB an
     * {@code UPDATE} for a row this engine has seen, the upsert for a name never seen, or for a
     * row the update found gone); after a refusal, a read of the row (on PostgreSQL the read
     * marks the row wanted). When the row was freed between the two, the acquire is sent once
     * more rather than answered busy.
     */
    private Answer ask(Acquisition attempt, String key) {
        return db.run(() -> "acquiring " + attempt, true, connection -> {
            Answer answer = askOnce(connection, attempt, key);
            if (answer == null) {
                answer = askOnce(connection, attempt, key);
            }
            return answer != null ? answer : new Answer(AcquireResult.busy(Duration.ofMillis(MIN_BACKOFF_MS)));
        });
    }

    /** @return the answer, or {@code null} when the acquire was refused but the row read after it is free (or gone) */
    private Answer askOnce(java.sql.Connection connection, Acquisition attempt, String key) throws java.sql.SQLException {
        // MariaDB: the update took nothing (busy, a row deleted since, or taken without the fence
        // read back): the read below tells which, and only a missing row needs the upsert
        boolean tookNothing = false;
        if (dialect.takesExistingRowFirst() && knownRows.contains(key)) {
            try (PreparedStatement statement = db.prepareReturningKey(connection, takeExistingSql)) {
                statement.setString(1, attempt.token());
                statement.setString(2, attempt.token());
                statement.setString(3, LockRows.holder(attempt.holder()));
                statement.setLong(4, attempt.lease().toMillis());
                statement.setString(5, key);
                statement.setString(6, attempt.token());
                if (statement.executeUpdate() == 1) {
                    try (ResultSet keys = statement.getGeneratedKeys()) {
                        if (keys.next() && keys.getLong(1) > 0) {
                            return new Answer(AcquireResult.granted(keys.getLong(1)));
                        }
                    }
                }
                tookNothing = true;
            }
        }
        if (!tookNothing) {
            Answer upserted = upsert(connection, attempt, key);
            if (upserted != null) {
                return upserted;
            }
        }
        return readAfterRefusal(connection, attempt, key, tookNothing);
    }

    /** The acquire's upsert; @return the grant, or {@code null} when it was refused or says nothing (then the row is read) */
    private Answer upsert(java.sql.Connection connection, Acquisition attempt, String key) throws java.sql.SQLException {
        try (PreparedStatement statement = dialect.acquireReturnsFenceAsKey() ? db.prepareReturningKey(connection, acquireSql)
                : db.prepare(connection, acquireSql)) {
            statement.setString(1, key);
            statement.setString(2, attempt.key().namespace());
            statement.setString(3, attempt.key().name());
            statement.setString(4, attempt.token());
            statement.setString(5, LockRows.holder(attempt.holder()));
            statement.setLong(6, attempt.lease().toMillis());
            if (dialect.acquireReturnsFence()) {
                try (ResultSet rows = statement.executeQuery()) {
                    if (rows.next()) {
                        return new Answer(AcquireResult.granted(rows.getLong(1)));
                    }
                }
            } else if (dialect.acquireReturnsFenceAsKey()) {
                statement.executeUpdate();
                rowSeen(key);
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    if (keys.next() && keys.getLong(1) > 0) {
                        return new Answer(AcquireResult.granted(keys.getLong(1)));
                    }
                }
            } else {
                statement.executeUpdate();
            }
        }
        return null;
    }

    /**
     * Reads the row after an acquire that did not say it granted.
     *
     * @param rowMayBeGone whether only MariaDB's update was sent, which takes nothing from a row
     *     deleted since: a missing row is then forgotten and asked for again (by the upsert)
     * @return the answer, or {@code null} to ask once more at once
     */
    private Answer readAfterRefusal(java.sql.Connection connection, Acquisition attempt, String key, boolean rowMayBeGone)
            throws java.sql.SQLException {
        try (PreparedStatement statement = db.prepare(connection, afterAcquireSql)) {
            int index = 1;
            if (dialect.marksWanted()) {
                statement.setLong(index++, WANTED_MARK_MS);
                statement.setString(index++, key);
            }
            statement.setString(index, key);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    if (rowMayBeGone) {
                        knownRows.remove(key);
                        return null;
                    }
                    return new Answer(AcquireResult.busy(Duration.ofMillis(MIN_BACKOFF_MS)));
                }
                String owner = rows.getString(1);
                if (dialect.marksWanted()) {
                    gate.marked(key, rows.getLong(4), rows.getLong(5), WANTED_MARK_MS);
                }
                if (attempt.token().equals(owner)) {
                    return new Answer(AcquireResult.granted(rows.getLong(2)));
                }
                long left = rows.getLong(3);
                if (owner == null || left <= 0) {
                    return null;
                }
                if (dialect.readsWantedMark() && !gate.holds(owner)
                        && (rows.getLong(4) != gate.ownMark(key) || rows.getLong(5) < WANTED_MARK_MS / 2)) {
                    markWanted(connection, key, rows.getLong(4));
                } else if (dialect.readsWantedMark() && rows.getLong(5) > 0 && rows.getLong(4) != gate.ownMark(key)) {
                    // held here, and marked by another client: its turn comes when this engine's turn is over
                    gate.othersMarked(key, rows.getLong(5));
                }
                return new Answer(AcquireResult.busy(Duration.ofMillis(Math.max(MIN_BACKOFF_MS, left))), owner, rows.getLong(2));
            }
        }
    }

    /**
     * MariaDB: marks the row wanted after a refusal by a hold of another engine, which then stops
     * handing the lock to its own threads ({@link Dialect#handOver}). A hold of this engine needs
     * no mark: this engine's line hands it on. This engine's own mark that stands for more than
     * half its length is left as it is, so a waiter polling every second writes about once in
     * {@link #WANTED_MARK_MS} / 2; any other mark is replaced, since it may be the holder's own
     * (written while it waited), which does not stop the holder's hand-offs.
     *
     * @param read the row's mark as the refusal read it
     */
    private void markWanted(java.sql.Connection connection, String key, long read) throws java.sql.SQLException {
        try (PreparedStatement statement = db.prepareReturningKey(connection, markWantedSql)) {
            statement.setLong(1, WANTED_MARK_MS);
            statement.setString(2, key);
            statement.setLong(3, read);
            if (statement.executeUpdate() == 1) {
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    if (keys.next()) {
                        gate.marked(key, keys.getLong(1), read, WANTED_MARK_MS);
                        return;
                    }
                }
            }
        }
        // marked by another client since the read (or the mark not read back): a mark of another client stands
        gate.othersMarked(key, WANTED_MARK_MS);
    }

    /** Notes that a lock's row exists (after an upsert it always does), for {@link #knownRows}. */
    private void rowSeen(String key) {
        if (knownRows.size() >= KNOWN_ROWS) {
            knownRows.clear();
        }
        knownRows.add(key);
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        LocalGate.Ticket ticket = waiting.get(attempt.token());
        if (ticket != null) {
            ticket.await(max);
        }
    }

    @Override
    public void abandon(Acquisition attempt) {
        LocalGate.Ticket ticket = waiting.remove(attempt.token());
        if (ticket != null) {
            ticket.leave();
            if (!ticket.asked()) {
                // it waited in line only: the database never saw it
                return;
            }
        }
        try {
            release(attempt);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "could not clear abandoned " + attempt + " on " + db.describe + "; it expires with its lease: " + e);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        return db.run(() -> "renewing " + attempt, true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, renewSql)) {
                statement.setLong(1, attempt.lease().toMillis());
                statement.setString(2, key);
                statement.setString(3, attempt.token());
                return statement.executeUpdate() == 1;
            }
        });
    }

    @Override
    public Set<Acquisition> renewAll(Collection<Acquisition> attempts) {
        if (attempts.size() <= 1) {
            return RenewsInBatches.oneByOne(this, attempts);
        }
        if (dialect.renewsMany()) {
            return renewMany(attempts);
        }
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
        lost.addAll(notHeld(untold));
        return lost;
    }

    /**
     * MariaDB: renews holds {@link #ROWS_PER_READ} at a time, one {@link Dialect#renewMany}
     * statement for each (holds grouped by lease). A statement whose row count falls short is
     * followed by a read of its rows to learn which holds are gone. A batch of single-row updates
     * cost the server about 15,000 statements a second for 10,000 holds on a 2-s lease, and fell
     * behind the leases when the server was busy (PERFORMANCE.md, held locks).
     *
     * @return the attempts no longer held
     */
    private Set<Acquisition> renewMany(Collection<Acquisition> attempts) {
        Map<Long, List<Acquisition>> byLease = new java.util.LinkedHashMap<>();
        for (Acquisition attempt : attempts) {
            byLease.computeIfAbsent(attempt.lease().toMillis(), lease -> new ArrayList<>()).add(attempt);
        }
        Set<Acquisition> lost = new HashSet<>();
        for (Map.Entry<Long, List<Acquisition>> group : byLease.entrySet()) {
            List<Acquisition> list = group.getValue();
            for (int from = 0; from < list.size(); from += ROWS_PER_READ) {
                List<Acquisition> chunk = list.subList(from, Math.min(list.size(), from + ROWS_PER_READ));
                int renewed = db.run("renewing " + chunk.size() + " locks", true, connection -> {
                    try (PreparedStatement statement = db.prepare(connection, dialect.renewMany(table, chunk.size()))) {
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
                    lost.addAll(notHeld(chunk));
                }
            }
        }
        return lost;
    }

    /**
     * For renewals whose batch the driver answered without counts (a bulk or rewritten batch says
     * only "done" for each), or whose {@link #renewMany} count fell short: reads the rows, {@link #ROWS_PER_READ} at a time. After the batch, a
     * row still ours and unexpired was renewed by it; any other (taken by another owner, or
     * expired before the update) is lost. Asking once per hold instead cost one statement each,
     * as many as the batch itself.
     *
     * @return the attempts no longer held
     */
    private Set<Acquisition> notHeld(List<Acquisition> attempts) {
        Set<Acquisition> lost = new HashSet<>();
        for (int from = 0; from < attempts.size(); from += ROWS_PER_READ) {
            List<Acquisition> chunk = attempts.subList(from, Math.min(attempts.size(), from + ROWS_PER_READ));
            Map<String, String> ownerByKey = db.run("checking " + chunk.size() + " renewals", true, connection -> {
                Map<String, String> owners = new java.util.HashMap<>();
                try (PreparedStatement statement = db.prepare(connection, dialect.readRows(table, chunk.size()))) {
                    for (int i = 0; i < chunk.size(); i++) {
                        statement.setString(i + 1, LockRows.key(table, chunk.get(i).key()));
                    }
                    try (ResultSet rows = statement.executeQuery()) {
                        while (rows.next()) {
                            if (rows.getLong(3) > 0 && rows.getString(2) != null) {
                                owners.put(rows.getString(1), rows.getString(2));
                            }
                        }
                    }
                }
                return owners;
            });
            for (Acquisition attempt : chunk) {
                if (!attempt.token().equals(ownerByKey.get(LockRows.key(table, attempt.key())))) {
                    lost.add(attempt);
                }
            }
        }
        return lost;
    }

    @Override
    public boolean release(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        LocalGate.HandOver handOver = handOverSql == null ? null : gate.handOverFrom(key, attempt.token());
        if (handOver != null) {
            return releaseHandingOver(attempt, key, handOver);
        }
        boolean[] failedOnce = new boolean[1];
        boolean released;
        try {
            released = db.run(() -> "releasing " + attempt, true, connection -> {
                try {
                    return releaseOnce(connection, key, attempt);
                } catch (java.sql.SQLException e) {
                    failedOnce[0] |= SqlErrors.isConnectionFailure(e);
                    throw e;
                }
            });
        } finally {
            // the hold is over for this JVM either way (a failed release ends with the lease):
            // the local head asks now
            gate.released(key, attempt.token());
        }
        if (!released && failedOnce[0]) {
            // the first try may have released before its reply was lost: a row freed (no owner)
            // since then is taken as our release
            released = db.run("checking the release of " + attempt, true, connection -> {
                try (PreparedStatement statement = db.prepare(connection, readRowSql)) {
                    statement.setString(1, key);
                    try (ResultSet rows = statement.executeQuery()) {
                        return rows.next() && rows.getString(1) == null;
                    }
                }
            });
        }
        if (released) {
            Wakeups.JVM.signal(key);
        }
        return released;
    }

    private static final long NOT_RELEASED = -2;
    private static final long RELEASED = -1;

    /**
     * Releases {@code attempt}'s hold and, in the same statement, hands the lock to the head of
     * the line unless another process waits for it ({@link Dialect#handOver}). A failed statement
     * whose first try may have gone through is checked as {@link #release} checks it.
     */
    private boolean releaseHandingOver(Acquisition attempt, String key, LocalGate.HandOver handOver) {
        Acquisition next = handOver.next().attempt();
        long sentAt = System.nanoTime();
        boolean[] failedOnce = new boolean[1];
        long outcome = NOT_RELEASED;
        try {
            outcome = db.run(() -> "releasing " + attempt + " to " + next, true, connection -> {
                try {
                    return handOverOnce(connection, key, attempt, handOver);
                } catch (java.sql.SQLException e) {
                    failedOnce[0] |= SqlErrors.isConnectionFailure(e);
                    throw e;
                }
            });
            if (outcome == NOT_RELEASED && failedOnce[0]) {
                // the first try may have gone through before its reply was lost
                outcome = db.run("checking the release of " + attempt, true, connection -> {
                    try (PreparedStatement statement = db.prepare(connection, readRowSql)) {
                        statement.setString(1, key);
                        try (ResultSet rows = statement.executeQuery()) {
                            if (!rows.next()) {
                                return NOT_RELEASED;
                            }
                            String owner = rows.getString(1);
                            return owner == null ? RELEASED : owner.equals(next.token()) ? rows.getLong(2) : NOT_RELEASED;
                        }
                    }
                });
            }
        } finally {
            if (!gate.handOverEnded(handOver, outcome >= 0 ? outcome : -1, sentAt)) {
                releaseLeftOver(next, key);
            }
            // released for all although a waiter here was ready: another process waits for the lock
            gate.released(key, attempt.token(), outcome == RELEASED);
        }
        if (outcome == RELEASED) {
            Wakeups.JVM.signal(key);
        }
        return outcome != NOT_RELEASED;
    }

    /** @return the new owner's fence when handed over, {@link #RELEASED}, or {@link #NOT_RELEASED} */
    private long handOverOnce(java.sql.Connection connection, String key, Acquisition attempt, LocalGate.HandOver handOver)
            throws java.sql.SQLException {
        Acquisition next = handOver.next().attempt();
        if (dialect != Dialect.POSTGRESQL) {
            return handOverByUpdate(connection, key, attempt, handOver);
        }
        try (PreparedStatement statement = db.prepare(connection, handOverSql)) {
            statement.setString(1, next.token());
            statement.setString(2, LockRows.holder(next.holder()));
            statement.setLong(3, next.lease().toMillis());
            statement.setLong(4, handOver.ownMark());
            statement.setBoolean(5, handOver.evenIfWanted());
            statement.setString(6, key);
            statement.setString(7, attempt.token());
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return NOT_RELEASED;
                }
                return next.token().equals(rows.getString(1)) ? rows.getLong(2) : RELEASED;
            }
        }
    }

    /** MariaDB: {@link #handOverOnce} by an {@code UPDATE} that answers with its row count and generated key. */
    private long handOverByUpdate(java.sql.Connection connection, String key, Acquisition attempt, LocalGate.HandOver handOver)
            throws java.sql.SQLException {
        Acquisition next = handOver.next().attempt();
        try (PreparedStatement statement = db.prepareReturningKey(connection, handOverSql)) {
            // the condition's two parameters come before each assignment's own value
            int index = passIf(statement, 1, handOver); // fence
            index = passIf(statement, index, handOver);
            statement.setString(index++, next.token());
            index = passIf(statement, index, handOver);
            statement.setString(index++, LockRows.holder(next.holder()));
            index = passIf(statement, index, handOver);
            statement.setLong(index++, next.lease().toMillis());
            statement.setString(index++, key);
            statement.setString(index, attempt.token());
            if (statement.executeUpdate() != 1) {
                return NOT_RELEASED;
            }
            try (ResultSet keys = statement.getGeneratedKeys()) {
                return keys.next() && keys.getLong(1) > 0 ? keys.getLong(1) : RELEASED;
            }
        }
    }

    /** Sets the hand-over condition's parameters (own mark, regardless) at {@code index}; @return the next index */
    private static int passIf(PreparedStatement statement, int index, LocalGate.HandOver handOver) throws java.sql.SQLException {
        statement.setLong(index, handOver.ownMark());
        statement.setBoolean(index + 1, handOver.evenIfWanted());
        return index + 2;
    }

    /** Releases a hold handed over to an attempt that gave up while the hand-off was under way. */
    private void releaseLeftOver(Acquisition next, String key) {
        try {
            if (db.run(() -> "releasing " + next + ", which gave up while handed the lock", true,
                    connection -> releaseOnce(connection, key, next))) {
                Wakeups.JVM.signal(key);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "could not release " + next + " on " + db.describe + "; it expires with its lease: " + e);
        }
    }

    private boolean releaseOnce(java.sql.Connection connection, String key, Acquisition attempt) throws java.sql.SQLException {
        try (PreparedStatement statement = db.prepare(connection, releaseSql)) {
            statement.setString(1, key);
            statement.setString(2, attempt.token());
            if (dialect == Dialect.POSTGRESQL) {
                try (ResultSet rows = statement.executeQuery()) {
                    return rows.next();
                }
            }
            return statement.executeUpdate() == 1;
        }
    }

    @Override
    public boolean isLocked(LockKey key) {
        String rowKey = LockRows.key(table, key);
        return db.run("reading lock '" + key.name() + "'", true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, isLockedSql)) {
                statement.setString(1, rowKey);
                try (ResultSet rows = statement.executeQuery()) {
                    return rows.next() && rows.getLong(1) > 0;
                }
            }
        });
    }

    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        return db.run("listing locks", true, connection -> {
            List<LockInfo> infos = new ArrayList<>();
            try (PreparedStatement statement = db.prepare(connection, inspectSql)) {
                statement.setString(1, namespace);
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        String name = rows.getString(1);
                        if (name.startsWith(prefix)) {
                            String holder = rows.getString(2);
                            infos.add(new LockInfo(name, "exclusive", holder == null ? "" : holder, rows.getLong(3),
                                    Optional.of(Duration.ofMillis(Math.max(0, rows.getLong(4)))), -1));
                        }
                    }
                }
            }
            return infos;
        });
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return idempotency;
    }

    @Override
    public void close() {
        gate.close();
        waiting.clear();
        if (listener != null) {
            listener.close();
        }
        db.source.close();
    }
}
