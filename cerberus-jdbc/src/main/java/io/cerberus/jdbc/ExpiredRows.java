package io.cerberus.jdbc;

import java.lang.System.Logger.Level;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The sweep of a lease-row engine's expired rows: a release deletes its row, but a holder that dies
 * leaves one, expired, until another client takes the name. Every {@link #PERIOD} (the first pass at a
 * random point of the first period, so clients started together do not sweep together) it reads up to
 * {@link SqlDialect#SWEPT_PER_STATEMENT} keys of expired or freed rows without locking, and deletes
 * those still expired by primary key; again while a read comes back full, at most {@link #STATEMENTS_PER_PASS}
 * times a pass. So the rows left are those held, those that expired since the last pass, and the few
 * freed by a release that handed the lock to another process. Epoch rows (empty name) are never swept.
 * A pass that fails (the database away) is logged and the next one tries again.
 */
final class ExpiredRows implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ExpiredRows.class.getName());
    /** How often each engine sweeps. */
    static final Duration PERIOD = Duration.ofSeconds(5);
    /** The most deleting statements of one pass. */
    static final int STATEMENTS_PER_PASS = 20;

    private final Db db;
    private final SqlDialect dialect;
    private final ScheduledExecutorService timer;

    ExpiredRows(Db db) {
        this.db = db;
        this.dialect = db.dialect;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "cerberus-jdbc-sweep-" + dialect.table);
            thread.setDaemon(true);
            return thread;
        });
        long period = PERIOD.toMillis();
        timer.scheduleWithFixedDelay(
                this::passQuietly, ThreadLocalRandom.current().nextLong(period), period, TimeUnit.MILLISECONDS);
    }

    private void passQuietly() {
        try {
            pass();
        } catch (RuntimeException e) {
            LOG.log(
                    Level.DEBUG,
                    "the sweep of expired lock rows on " + db.describe + " failed; the next one retries: " + e);
        }
    }

    /** @return how many rows this pass deleted */
    int pass() {
        int deleted = 0;
        for (int statement = 0; statement < STATEMENTS_PER_PASS; statement++) {
            List<String> keys = expiredKeys();
            if (!keys.isEmpty()) {
                deleted += delete(keys);
            }
            if (keys.size() < SqlDialect.SWEPT_PER_STATEMENT) {
                break;
            }
        }
        return deleted;
    }

    private List<String> expiredKeys() {
        return db.run("reading expired lock rows", true, connection -> {
            List<String> keys = new ArrayList<>();
            try (PreparedStatement statement = db.prepare(connection, dialect.expiredKeysSql);
                    ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    keys.add(rows.getString(1));
                }
            }
            return keys;
        });
    }

    private int delete(List<String> keys) {
        return db.run("deleting " + keys.size() + " expired lock rows", true, connection -> {
            try (PreparedStatement statement = db.prepare(connection, dialect.deleteExpiredSql(keys.size()))) {
                for (int i = 0; i < keys.size(); i++) {
                    statement.setString(i + 1, keys.get(i));
                }
                return statement.executeUpdate();
            }
        });
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
