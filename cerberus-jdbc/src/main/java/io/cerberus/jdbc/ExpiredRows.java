package io.cerberus.jdbc;

import java.lang.System.Logger.Level;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The sweep of a lease-row engine's dead rows: a release of a name released before leaves its row free
 * ({@link RecentReleases}), and a holder that dies leaves one expired, until another client takes the name.
 * Every {@link #PERIOD} (the first pass at a random point of the first period, so clients started together do
 * not sweep together) a pass reads up to {@link SqlDialect#SWEPT_PER_STATEMENT} keys of expired or freed rows
 * without locking and deletes those still expired or free by primary key, again while a read comes back full,
 * at most {@link #STATEMENTS_PER_PASS} times; a pass that stopped at that cap is followed by the next at once,
 * so the sweep keeps up with any rate of releases in bounded statements. The rows left are those held, and
 * those freed or expired since the last pass: a number that follows the rate of releases, not the names ever
 * locked. {@link #close} sweeps once more, for at most a period, when this engine ever released a lock. Epoch
 * rows (empty name) are never swept. A pass that fails (the database away) is logged and the next one tries
 * again.
 */
final class ExpiredRows implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ExpiredRows.class.getName());
    /** How often each engine sweeps. */
    static final Duration PERIOD = Duration.ofSeconds(5);
    /** The most deleting statements of one pass. */
    static final int STATEMENTS_PER_PASS = 20;

    private final Db db;
    private final SqlDialect dialect;
    private final ScheduledThreadPoolExecutor timer;
    /** Whether this engine ever released a lock (its row may be free): then {@link #close} sweeps once more. */
    private volatile boolean freed;

    ExpiredRows(Db db) {
        this.db = db;
        this.dialect = db.dialect;
        this.timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "cerberus-jdbc-sweep-" + dialect.table);
            thread.setDaemon(true);
            return thread;
        });
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timer.schedule(this::sweep, ThreadLocalRandom.current().nextLong(PERIOD.toMillis()), TimeUnit.MILLISECONDS);
    }

    /** One pass, and the next scheduled: at once after a pass that stopped at its cap, else after a period. */
    private void sweep() {
        boolean more = passQuietly();
        try {
            timer.schedule(this::sweep, more ? 0 : PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // closed meanwhile
        }
    }

    /** @return whether the pass stopped at its cap, with rows left to sweep */
    private boolean passQuietly() {
        try {
            return pass() == STATEMENTS_PER_PASS * SqlDialect.SWEPT_PER_STATEMENT;
        } catch (RuntimeException e) {
            LOG.log(
                    Level.DEBUG,
                    "the sweep of expired lock rows on " + db.describe + " failed; the next one retries: " + e);
            return false;
        }
    }

    /** Notes that this engine released a lock: a row it left free goes in a pass, or the one at {@link #close}. */
    void freed() {
        if (!freed) {
            freed = true;
        }
    }

    /**
     * @return how many keys this pass read to delete: {@link #STATEMENTS_PER_PASS} times a full read when it
     *     stopped at its cap
     */
    int pass() {
        int read = 0;
        for (int statement = 0; statement < STATEMENTS_PER_PASS; statement++) {
            List<String> keys = expiredKeys();
            if (!keys.isEmpty()) {
                delete(keys);
            }
            read += keys.size();
            if (keys.size() < SqlDialect.SWEPT_PER_STATEMENT) {
                break;
            }
        }
        return read;
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

    /**
     * Stops the timer, lets a pass under way end, and, when this engine ever released a lock, sweeps for at most
     * a period more: the rows it freed since the last pass, and whatever else is due.
     */
    @Override
    public void close() {
        timer.shutdown();
        long until = System.nanoTime() + PERIOD.toNanos();
        try {
            timer.awaitTermination(PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            timer.shutdownNow();
            return;
        }
        if (freed) {
            while (passQuietly() && System.nanoTime() < until) {
                // rows left: another pass
            }
        }
        timer.shutdownNow();
    }
}
