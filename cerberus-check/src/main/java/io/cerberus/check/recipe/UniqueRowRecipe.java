package io.cerberus.check.recipe;

import io.cerberus.check.log.JdbcUrls;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The {@code unique-row} recipe of {@link Recipe}: a table whose primary key is the lock name. A
 * lock is taken by inserting its row, with an expiry on the client's clock, and released by
 * deleting the row it inserted; a clean-up job in every client deletes the rows whose expiry has
 * passed, so a crashed holder's lock comes free. Nothing renews a row and nothing fences a write:
 * a holder that runs past its expiry (a pause, a slow step) has its row deleted under it.
 */
final class UniqueRowRecipe implements Recipe {
    private static final String TABLE = "recipe_locks";
    private static final Duration RETRY = Duration.ofMillis(20);

    private final String url;
    private final Duration lease;
    private final ThreadLocal<Connection> connections;
    private final java.util.Queue<Connection> opened = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final ScheduledExecutorService cleanup;

    private UniqueRowRecipe(String url, Duration lease) {
        this.url = url;
        this.lease = lease;
        this.connections = ThreadLocal.withInitial(this::open);
        this.cleanup = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "recipe-cleanup");
            thread.setDaemon(true);
            return thread;
        });
    }

    static UniqueRowRecipe connect(String engineUri, Duration lease) {
        if (!Recipe.runsOn("unique-row", engineUri)) {
            throw new IllegalArgumentException("--recipe unique-row needs " + Recipe.needs("unique-row"));
        }
        UniqueRowRecipe recipe = new UniqueRowRecipe(JdbcUrls.withoutCerberusParameters(engineUri), lease);
        try (Statement statement = recipe.connection().createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + TABLE
                    + " (name VARCHAR(191) PRIMARY KEY, owner VARCHAR(64) NOT NULL," + " expires_at BIGINT NOT NULL)");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the table " + TABLE + ": " + e.getMessage(), e);
        }
        long every = Math.max(10, lease.toMillis() / 2);
        recipe.cleanup.scheduleWithFixedDelay(recipe::deleteExpired, every, every, TimeUnit.MILLISECONDS);
        return recipe;
    }

    private Connection open() {
        try {
            Connection connection = DriverManager.getConnection(url);
            connection.setAutoCommit(true);
            opened.add(connection);
            return connection;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot connect to the database: " + e.getMessage(), e);
        }
    }

    private Connection connection() {
        return connections.get();
    }

    /** The clean-up job: deletes every row whose expiry, on this client's clock, has passed. */
    private void deleteExpired() {
        try (PreparedStatement delete =
                connection().prepareStatement("DELETE FROM " + TABLE + " WHERE expires_at < ?")) {
            delete.setLong(1, System.currentTimeMillis());
            delete.executeUpdate();
        } catch (SQLException | RuntimeException e) {
            connections.remove(); // a broken connection is opened again on the next round
        }
    }

    @Override
    public Optional<Hold> tryAcquire(String lockName, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        String owner = UUID.randomUUID().toString();
        do {
            try (PreparedStatement insert =
                    connection().prepareStatement("INSERT INTO " + TABLE + " VALUES (?, ?, ?)")) {
                insert.setString(1, lockName);
                insert.setString(2, owner);
                insert.setLong(3, System.currentTimeMillis() + lease.toMillis());
                insert.executeUpdate();
                return Optional.of(() -> release(lockName, owner));
            } catch (SQLException e) {
                if (e.getSQLState() == null || !e.getSQLState().startsWith("23")) {
                    connections.remove();
                    throw new IllegalStateException("the insert failed: " + e.getMessage(), e);
                }
            }
            Thread.sleep(RETRY.toMillis());
        } while (System.nanoTime() - deadline < 0);
        return Optional.empty();
    }

    private void release(String lockName, String owner) {
        try (PreparedStatement delete =
                connection().prepareStatement("DELETE FROM " + TABLE + " WHERE name = ? AND owner = ?")) {
            delete.setString(1, lockName);
            delete.setString(2, owner);
            delete.executeUpdate();
        } catch (SQLException e) {
            connections.remove();
            throw new IllegalStateException("the delete failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        cleanup.shutdownNow();
        for (Connection connection : opened) {
            try {
                connection.close();
            } catch (SQLException e) {
                // closing at the end: nothing is left to do with it
            }
        }
    }
}
