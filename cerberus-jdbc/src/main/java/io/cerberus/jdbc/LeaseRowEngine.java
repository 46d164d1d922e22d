package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.jdbc.SqlDialect.Answer;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.ReleasesByForce;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.spi.TakesTurns;
import java.lang.System.Logger.Level;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code jdbc:} engine in lease-row mode.
 *
 * <p><b>Recipe.</b> A row per held lock ({@link LockRows}): the owner's token, a fence and an expiry on the
 * <em>database's</em> clock. Acquire is one atomic upsert ({@link SqlDialect#acquire}) that takes the row when
 * missing, free, expired or already this attempt's; every new grant draws its fence from the table's sequence
 * ({@link SqlDialect#fenceSequence}, created above every fence already in the table), a retry keeps its fence,
 * so a name's tokens only grow though its row is deleted between holds. Renew is an update, release a delete
 * (or frees the row: {@link RecentReleases}), guarded by token and expiry; free and dead rows go in a bounded
 * sweep ({@link ExpiredRows}). Databases differ only by dialect ({@link PostgresDialect}, {@link MariaDbDialect},
 * {@link H2Dialect}). A namespace's epoch ({@link KeepsEpochs}) is the fence of a row no lock has (never swept).
 *
 * <p><b>Waiting.</b> The core lines waiters up per lock ({@link LinesUpLocally}); the head, refused by a hold
 * elsewhere, backs off with jitter ({@link #FIRST_BACKOFF} to {@link #MAX_BACKOFF}, never past the holder's lease),
 * woken early by a release in this JVM ({@link Wakeups}) or, where the database notifies
 * ({@link SqlDialect#notifications}), by a release of a row it marked wanted for {@link #WANTED_MARK_MS}.
 *
 * <p><b>Hand-off.</b> Where the database has a {@link HandOverRelease} (PostgreSQL, MariaDB), a release writes
 * the sleeping head of the line in as owner with a fence from the sequence, in one statement, while no other
 * process marked the row wanted or within this client's {@link #TURN} ({@link TakesTurns}); otherwise it
 * releases and says it yielded. On H2 the next thread asks.
 *
 * <p><b>Costs.</b> Acquire: one statement (H2: and a read; MariaDB, H2: and a fence's draw for a new row); busy:
 * and a read. Release, hand-off: one statement. Renewals: one batch. Own connections, outside callers' transactions.
 */
final class LeaseRowEngine
        implements LockEngine,
                RenewsInBatches,
                Inspects,
                KeepsIdempotencyRecords,
                JdbcTurns,
                NotifiesChanges,
                ReleasesByForce,
                KeepsEpochs {
    private static final System.Logger LOG = System.getLogger(LeaseRowEngine.class.getName());
    static final Set<Capability> CAPABILITIES =
            Set.of(Capability.FENCING, Capability.MULTI_PROCESS, Capability.INSPECT);
    /** Keys per read when renewals are checked by reading their rows. */
    private static final int ROWS_PER_READ = 500;
    /** The first pause of a refused head's backoff, and the shortest bound of a busy answer. */
    static final Duration FIRST_BACKOFF = Duration.ofMillis(20);
    /** The longest pause of a refused head's backoff. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(1);
    /** How long a lock another process wants stays with this client's threads, from the streak's first grant. */
    static final Duration TURN = Duration.ofMillis(100);
    /**
     * How long the line holds back after releasing a lock for another process: longer than the
     * first poll of a waiter there that sees the lock change hands, and than a notification takes.
     */
    static final Duration HOLD_BACK = FIRST_BACKOFF.multipliedBy(2);
    /**
     * How long a refused acquire marks a row wanted. An engine with a waiter asks again at least
     * every {@link #MAX_BACKOFF} and renews the mark each time, so five of those keep it standing
     * between asks with room to spare; a mark that lapses anyway only leaves a waiter of another
     * process to its backoff.
     */
    static final long WANTED_MARK_MS = 5 * MAX_BACKOFF.toMillis();

    private final Db db;
    private final SqlDialect dialect;
    private final String table;
    /** The release that hands the lock to the next waiter of this engine; null where the database has none (H2). */
    private final HandOverRelease handOver;
    /** What wakes each waiting attempt early, by token, from its first ask until granted or abandoned. */
    private final Wakeups.Waiters waiters = new Wakeups.Waiters();

    private final WantedMarks marks = new WantedMarks();
    private final PgListener listener;

    private final JdbcIdempotencyStore idempotency;
    private final ExpiredRows sweep;

    LeaseRowEngine(Db db, boolean createTable) {
        this.db = db;
        this.dialect = db.dialect;
        this.table = dialect.table;
        this.handOver = dialect.handOverRelease().orElse(null);
        this.listener = dialect.notifications(db.source).orElse(null);
        this.idempotency = new JdbcIdempotencyStore(db, table, createTable, listener != null);
        this.sweep = new ExpiredRows(db);
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
            return Optional.of(
                    "lease-row mode keeps locks as rows with an expiry; add cerberus.mode=session to the URI for "
                            + "the database's session locks");
        }
        return Optional.empty();
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        waiters.asking(attempt.token(), key);
        AcquireResult result = ask(attempt, key).result();
        if (result instanceof AcquireResult.Granted) {
            waiters.done(attempt.token());
            marks.held(attempt.token());
        }
        return result;
    }

    /**
     * Sends the acquire ({@link SqlDialect#acquire}: one statement on PostgreSQL, and on MariaDB for
     * a row it saw, when granted; two for a row MariaDB inserts; after a refusal, a read of the row). When the row was freed between the two, the
     * acquire is sent once more rather than answered busy.
     */
    private Answer ask(Acquisition attempt, String key) {
        return db.run(() -> "acquiring " + attempt, true, connection -> {
            Answer answer = dialect.acquire(db, connection, attempt, key, marks);
            if (answer == null) {
                answer = dialect.acquire(db, connection, attempt, key, marks);
            }
            return answer != null ? answer : Answer.busy();
        });
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        waiters.await(attempt.token(), max);
    }

    /** An async waiter is woken by what wakes {@link #awaitChange}, through a callback ({@link Wakeups}). */
    @Override
    public ChangeWatch onChange(Acquisition attempt, Runnable wake) {
        return waiters.onChange(attempt.token(), wake);
    }

    /** @return how many async waiters' callbacks wait on the lock now (for tests) */
    int changeCallbacks(LockKey lock) {
        return Wakeups.JVM.callbacks(LockRows.key(table, lock));
    }

    /** Takes turns with other processes only where the release can hand over (not on H2). */
    @Override
    public <A> Optional<A> ability(Class<A> ability) {
        return ability == TakesTurns.class && handOver == null ? Optional.empty() : LockEngine.super.ability(ability);
    }

    @Override
    public void abandon(Acquisition attempt) {
        waiters.done(attempt.token());
        try {
            release(attempt);
        } catch (RuntimeException e) {
            LOG.log(
                    Level.DEBUG,
                    "could not clear abandoned " + attempt + " on " + db.describe + "; it expires with its lease: "
                            + e);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        return db.run(() -> "renewing " + attempt, true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, dialect.renewSql)) {
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
        return dialect.renewAll(db, attempts, this::notHeld);
    }

    /**
     * For renewals whose batch the driver answered without counts (a bulk or rewritten batch says
     * only "done" for each), or whose one statement for many holds ({@link MariaDbDialect}) fell
     * short: reads the rows, {@link #ROWS_PER_READ} at a time. After the renewal, a row still ours
     * and unexpired was renewed by it; any other (taken by another owner, or expired before the
     * update) is lost. Asking once per hold instead cost one statement each, as many as the batch
     * itself.
     *
     * @return the attempts no longer held
     */
    private Set<Acquisition> notHeld(List<Acquisition> attempts) {
        Set<Acquisition> lost = new HashSet<>();
        for (int from = 0; from < attempts.size(); from += ROWS_PER_READ) {
            List<Acquisition> chunk = attempts.subList(from, Math.min(attempts.size(), from + ROWS_PER_READ));
            Map<String, String> ownerByKey = db.run("checking " + chunk.size() + " renewals", true, connection -> {
                Map<String, String> owners = new java.util.HashMap<>();
                try (PreparedStatement statement = db.prepare(connection, dialect.readRows(chunk.size()))) {
                    for (int i = 0; i < chunk.size(); i++) {
                        statement.setString(
                                i + 1, LockRows.key(table, chunk.get(i).key()));
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
        marks.ended(attempt.token());
        boolean[] failedOnce = new boolean[1];
        boolean released = db.run(() -> "releasing " + attempt, true, connection -> {
            try {
                return releaseOnce(connection, key, attempt);
            } catch (java.sql.SQLException e) {
                failedOnce[0] |= SqlErrors.isConnectionFailure(e);
                throw e;
            }
        });
        if (!released && failedOnce[0]) {
            // the first try may have released before its reply was lost: a row gone or freed (no
            // owner) since then is taken as our release
            released = db.run("checking the release of " + attempt, true, connection -> {
                try (PreparedStatement statement = db.prepare(connection, dialect.readRowSql)) {
                    statement.setString(1, key);
                    try (ResultSet rows = statement.executeQuery()) {
                        return !rows.next() || rows.getString(1) == null;
                    }
                }
            });
        }
        if (released) {
            sweep.freed();
            Wakeups.JVM.signal(key);
        }
        return released;
    }

    /**
     * Releases {@code holder}; with a {@code next} waiter of this client, in the same statement
     * hands the lock to it unless another process wants the row and the turn is over
     * ({@link HandOverRelease}). A plain release past the turn while another process's mark stands
     * yields too.
     */
    @Override
    public HandOff release(Acquisition holder, Acquisition next, boolean withinTurn) {
        String key = LockRows.key(table, holder.key());
        if (next == null) {
            boolean released = release(holder);
            return released && !withinTurn && marks.othersWait(key)
                    ? HandOff.yieldedToOthers()
                    : HandOff.notHanded(released);
        }
        marks.ended(holder.token());
        long outcome = releaseHandingOver(holder, key, next, withinTurn);
        if (outcome >= 0) {
            waiters.done(next.token());
            marks.held(next.token());
            return HandOff.handed(outcome);
        }
        if (outcome == HandOverRelease.RELEASED) {
            sweep.freed();
            Wakeups.JVM.signal(key);
            return HandOff.yieldedToOthers();
        }
        return HandOff.notHanded(false);
    }

    /**
     * Sends the hand-over release; a failed statement whose first try may have gone through is
     * checked as {@link #release} checks it.
     *
     * @return the new owner's fence, {@link HandOverRelease#RELEASED} or {@link HandOverRelease#NOT_RELEASED}
     */
    private long releaseHandingOver(Acquisition attempt, String key, Acquisition next, boolean withinTurn) {
        boolean[] failedOnce = new boolean[1];
        long ownMark = marks.ownMarkToPass(key);
        long outcome = db.run(() -> "releasing " + attempt + " to " + next, true, connection -> {
            try {
                return handOver.releaseHandingOver(db, connection, key, attempt, next, ownMark, withinTurn);
            } catch (java.sql.SQLException e) {
                failedOnce[0] |= SqlErrors.isConnectionFailure(e);
                throw e;
            }
        });
        if (outcome == HandOverRelease.NOT_RELEASED && failedOnce[0]) {
            // the first try may have gone through before its reply was lost
            outcome = db.run("checking the release of " + attempt, true, connection -> {
                try (PreparedStatement statement = db.prepare(connection, dialect.readRowSql)) {
                    statement.setString(1, key);
                    try (ResultSet rows = statement.executeQuery()) {
                        if (!rows.next()) {
                            return HandOverRelease.RELEASED; // freed, then deleted
                        }
                        String owner = rows.getString(1);
                        return owner == null
                                ? HandOverRelease.RELEASED
                                : owner.equals(next.token()) ? rows.getLong(2) : HandOverRelease.NOT_RELEASED;
                    }
                }
            });
        }
        return outcome;
    }

    private boolean releaseOnce(java.sql.Connection connection, String key, Acquisition attempt)
            throws java.sql.SQLException {
        return dialect.release(db, connection, key, attempt.token());
    }

    /**
     * One statement guarded by the fence ({@link SqlDialect#forceRelease}). Sent again after a lost
     * connection, a first try that went through finds the row gone and answers false: the operator
     * sees "not freed", inspects, and finds the lock free.
     */
    @Override
    public boolean forceRelease(LockKey key, long fencingToken) {
        if (fencingToken <= 0) {
            return false; // no grant's token: a row with fence 0 is an acquire whose fence is not drawn yet
        }
        String rowKey = LockRows.key(table, key);
        boolean freed = db.run(
                () -> "freeing lock '" + key.name() + "' by force",
                true,
                connection -> dialect.forceRelease(db, connection, rowKey, fencingToken));
        if (freed) {
            Wakeups.JVM.signal(rowKey);
        }
        return freed;
    }

    @Override
    public boolean isLocked(LockKey key) {
        String rowKey = LockRows.key(table, key);
        return db.run("reading lock '" + key.name() + "'", true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, dialect.isLockedSql)) {
                statement.setString(1, rowKey);
                try (ResultSet rows = statement.executeQuery()) {
                    return rows.next() && rows.getLong(1) > 0;
                }
            }
        });
    }

    /** The light read of every engine, and what the start-up checks found that costs this engine (PostgreSQL: transaction pooling). */
    @Override
    public List<String> checkHealth(LockKey probe) {
        isLocked(probe);
        return dialect.warnings();
    }

    @Override
    public List<LockInfo> inspect(String namespace, String prefix) {
        return db.run("listing locks", true, connection -> {
            List<LockInfo> infos = new ArrayList<>();
            try (PreparedStatement statement = db.prepare(connection, dialect.inspectSql)) {
                statement.setString(1, namespace);
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        String name = rows.getString(1);
                        if (name.startsWith(prefix)) {
                            String holder = rows.getString(2);
                            infos.add(new LockInfo(
                                    name,
                                    "exclusive",
                                    holder == null ? "" : holder,
                                    rows.getLong(3),
                                    Optional.of(Duration.ofMillis(Math.max(0, rows.getLong(4)))),
                                    -1));
                        }
                    }
                }
            }
            return infos;
        });
    }

    @Override
    public long epoch(String namespace) {
        String key = LockRows.epochKey(table, namespace);
        return db.run(
                () -> "reading the epoch of namespace '" + namespace + "'",
                true,
                connection -> dialect.readEpoch(db, connection, key));
    }

    /** One statement that keeps the greater epoch: sent again after a lost connection, it changes nothing more. */
    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        String key = LockRows.epochKey(table, namespace);
        return db.run(
                () -> "raising the epoch of namespace '" + namespace + "' to " + atLeast,
                true,
                connection -> dialect.raiseEpoch(db, connection, key, namespace, atLeast));
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return idempotency;
    }

    @Override
    public void close() {
        sweep.close();
        waiters.close();
        if (listener != null) {
            listener.close();
        }
        db.source.close();
    }
}
