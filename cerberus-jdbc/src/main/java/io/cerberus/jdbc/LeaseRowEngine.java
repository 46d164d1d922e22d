package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.LockInfo;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
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
import java.util.concurrent.ThreadLocalRandom;

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
 * <p><b>Waiting.</b> Exponential backoff with jitter (20 ms doubling up to 1 s, never past the
 * holder's remaining lease); a release in this JVM wakes waiters at once ({@link Wakeups}), and on
 * PostgreSQL every release notifies a channel that waiters in all processes listen on
 * ({@link PgListener}).
 *
 * <p><b>Costs.</b> Acquire granted: one statement on PostgreSQL, an upsert and a read elsewhere.
 * Release: one statement. Renewals of many holds: one batch. The engine works on its own pooled
 * connections in auto-commit mode, outside any transaction of the application.
 */
final class LeaseRowEngine implements LockEngine {
    private static final System.Logger LOG = System.getLogger(LeaseRowEngine.class.getName());
    static final Set<Capability> CAPABILITIES = Set.of(Capability.FENCING, Capability.MULTI_PROCESS, Capability.INSPECT);
    private static final long MIN_BACKOFF_MS = 20;
    private static final long MAX_BACKOFF_MS = 1000;

    private final Db db;
    private final Dialect dialect;
    private final String table;
    private final String channel;
    private final String acquireSql;
    private final String afterAcquireSql;
    private final String renewSql;
    private final String releaseSql;
    private final String isLockedSql;
    private final String inspectSql;
    private final Map<String, Waiting> waiting = new ConcurrentHashMap<>();
    private final PgListener listener;

    /** A busy attempt's wait state, from its first busy answer until it is granted or abandoned. */
    private static final class Waiting {
        final Wakeups.Interest interest;
        volatile long seen;
        volatile int busyAnswers;

        Waiting(Wakeups.Interest interest) {
            this.interest = interest;
        }
    }

    private final JdbcIdempotencyStore idempotency;

    LeaseRowEngine(Db db, String table, boolean createTable) {
        this.db = db;
        this.dialect = db.dialect;
        this.table = table;
        this.channel = channel(table);
        this.acquireSql = dialect.acquire(table);
        this.afterAcquireSql = dialect.afterAcquire(table);
        this.renewSql = dialect.renew(table);
        this.releaseSql = dialect.release(table, channel);
        this.isLockedSql = dialect.isLocked(table);
        this.inspectSql = dialect.inspect(table);
        this.listener = dialect == Dialect.POSTGRESQL ? PgListener.start(db.source, channel) : null;
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
        Waiting wait = waiting.computeIfAbsent(attempt.token(), t -> new Waiting(Wakeups.JVM.register(key)));
        wait.seen = wait.interest.version();
        long[] outcome = db.run("acquiring " + attempt, true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, acquireSql)) {
                statement.setString(1, key);
                statement.setString(2, attempt.key().namespace());
                statement.setString(3, attempt.key().name());
                statement.setString(4, attempt.token());
                statement.setString(5, LockRows.holder(attempt.holder()));
                statement.setLong(6, attempt.lease().toMillis());
                if (dialect.acquireReturnsFence()) {
                    try (ResultSet rows = statement.executeQuery()) {
                        if (rows.next()) {
                            return new long[] {1, rows.getLong(1)};
                        }
                    }
                } else {
                    statement.executeUpdate();
                }
            }
            try (PreparedStatement statement = db.prepare(connection, afterAcquireSql)) {
                statement.setString(1, key);
                try (ResultSet rows = statement.executeQuery()) {
                    if (!rows.next()) {
                        return new long[] {0, 0};
                    }
                    boolean ours = attempt.token().equals(rows.getString(1));
                    return new long[] {ours ? 1 : 0, ours ? rows.getLong(2) : rows.getLong(3)};
                }
            }
        });
        if (outcome[0] == 1) {
            done(attempt);
            return AcquireResult.granted(outcome[1]);
        }
        return AcquireResult.busy(Duration.ofMillis(Math.max(MIN_BACKOFF_MS, outcome[1])));
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        Waiting wait = waiting.get(attempt.token());
        if (wait == null) {
            return;
        }
        int answers = wait.busyAnswers++;
        long ceiling = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS << Math.min(answers, 10));
        long backoff = ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1);
        Duration bound = Duration.ofMillis(backoff);
        wait.interest.await(wait.seen, bound.compareTo(max) < 0 ? bound : max);
    }

    private void done(Acquisition attempt) {
        Waiting wait = waiting.remove(attempt.token());
        if (wait != null) {
            wait.interest.close();
        }
    }

    @Override
    public void abandon(Acquisition attempt) {
        done(attempt);
        try {
            release(attempt);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "could not clear abandoned " + attempt + " on " + db.describe + "; it expires with its lease: " + e);
        }
    }

    @Override
    public boolean renew(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        return db.run("renewing " + attempt, true, connection -> {
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
            return LockEngine.super.renewAll(attempts);
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
        for (int i = 0; i < list.size(); i++) {
            int count = i < counts.length ? counts[i] : Statement.EXECUTE_FAILED;
            if (count == Statement.SUCCESS_NO_INFO || count == Statement.EXECUTE_FAILED) {
                // the driver did not say: ask once for this one
                if (!renew(list.get(i))) {
                    lost.add(list.get(i));
                }
            } else if (count != 1) {
                lost.add(list.get(i));
            }
        }
        return lost;
    }

    @Override
    public boolean release(Acquisition attempt) {
        String key = LockRows.key(table, attempt.key());
        boolean[] failedOnce = new boolean[1];
        boolean released = db.run("releasing " + attempt, true, connection -> {
            try {
                return releaseOnce(connection, key, attempt);
            } catch (java.sql.SQLException e) {
                failedOnce[0] |= SqlErrors.isConnectionFailure(e);
                throw e;
            }
        });
        if (!released && failedOnce[0]) {
            // the first try may have released before its reply was lost: a row freed (no owner)
            // since then is taken as our release
            released = db.run("checking the release of " + attempt, true, connection -> {
                try (PreparedStatement statement = db.prepare(connection, afterAcquireSql)) {
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
    public Optional<io.cerberus.spi.IdempotencyStore> idempotencyStore() {
        return Optional.of(idempotency);
    }

    @Override
    public void close() {
        for (Waiting wait : waiting.values()) {
            wait.interest.close();
        }
        waiting.clear();
        if (listener != null) {
            listener.close();
        }
        db.source.close();
    }
}
