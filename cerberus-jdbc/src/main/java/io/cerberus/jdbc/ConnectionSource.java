package io.cerberus.jdbc;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.support.ScrubbedErrors;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * Where the engine's connections come from: the application's {@link DataSource}, or a small
 * built-in pool over {@link DriverManager} when none is given. Short statements borrow and give
 * back; a session-mode hold and the PostgreSQL listener take a dedicated connection that never
 * goes back to a pool while it is in use (a session-mode connection that holds nothing any more
 * may then serve the next hold). Every connection is in auto-commit mode and has a
 * network timeout, so no call hangs past the engine's timeout.
 */
abstract class ConnectionSource implements AutoCloseable {
    /** Runs connection attempts so they can be given up at the timeout, and drivers' timeouts. */
    private static final ExecutorService CONNECTORS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "cerberus-jdbc-connect");
        thread.setDaemon(true);
        return thread;
    });

    final String describe;
    final Duration timeout;

    ConnectionSource(String describe, Duration timeout) {
        this.describe = describe;
        this.timeout = timeout;
    }

    static ConnectionSource of(JdbcTarget target, JdbcOptions options, Duration timeout) {
        return options.dataSource()
                .<ConnectionSource>map(ds -> new FromDataSource(target.describe(), timeout, ds))
                .orElseGet(() -> new BuiltInPool(target.driverUrl(), target.describe(), timeout, target.poolSize()));
    }

    /** @return a connection for a few statements; give it back with {@link #giveBack} */
    abstract Connection borrow() throws SQLException;

    /**
     * @param connection a borrowed connection
     * @param broken whether it failed in a way that may have broken it
     */
    abstract void giveBack(Connection connection, boolean broken);

    /**
     * @return whether the server itself cancels every statement on this source's connections at
     *     the engine's timeout, so statements need no client-side query timeout
     */
    boolean serverTimesStatements() {
        return false;
    }

    /** Closes the idle connections: after one failed, the others (older still) are likely dead too. */
    void purgeIdle() {}

    /** @return a new connection for the caller alone; the caller closes it */
    abstract Connection dedicated() throws SQLException;

    /**
     * Takes a connection of {@link #dedicated} that its caller is done with and that holds nothing
     * (auto-commit, no session state): the built-in pool keeps it for the next borrow when there is
     * room; otherwise it is closed (an application's pool gets it back).
     *
     * @param connection the connection, or null for none
     */
    void adopt(Connection connection) {
        closeQuietly(connection);
    }

    /**
     * Told at start on PostgreSQL, once the connections are known to keep their database session
     * from one transaction to the next (no transaction pooling in between, see {@link PgPooling}):
     * session settings then stay with a connection, so the built-in pool has the server time its
     * statements. Never called otherwise: a session setting made through transaction pooling would
     * stay behind on a server connection that other clients use next.
     */
    void sessionsLast() {}

    /**
     * @return a connection a session-mode hold gave back clean ({@link #keepSession}), or null when
     *     none is idle: the caller then takes a {@link #dedicated} one
     */
    Connection idleSession() {
        return null;
    }

    /**
     * Takes back a session-mode connection that holds nothing (its lock released, or never taken),
     * to serve a later hold without opening a connection; closes it when there is no room.
     *
     * @param connection a connection of {@link #idleSession} or {@link #dedicated}
     */
    void keepSession(Connection connection) {
        closeQuietly(connection);
    }

    /** Closes the idle session-mode connections: after one failed, the others are likely dead too. */
    void purgeIdleSessions() {}

    /**
     * @return whether closing a connection of this source ends its database session (and so frees
     *     the session locks it holds); false for an application's pool, which keeps the session open
     */
    boolean closeEndsSession() {
        return false;
    }

    @Override
    public abstract void close();

    /** Opens a connection within the timeout, set up for the engine. */
    Connection open(Opener opener) throws SQLException {
        Future<Connection> future = CONNECTORS.submit(opener::open);
        Connection connection;
        // an interrupt does not cut a connection attempt short: the core decides about
        // interruption between engine calls, and keeps the flag for the caller
        boolean interrupted = false;
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                try {
                    connection = future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (TimeoutException e) {
            future.cancel(true);
            CONNECTORS.execute(() -> closeLater(future));
            throw new EngineUnavailableException(
                    "could not connect to " + describe + " within " + timeout.toMillis() + "ms", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SQLException) {
                throw (SQLException) cause;
            }
            throw new EngineUnavailableException("could not connect to " + describe + ": " + cause, cause);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return setUp(connection);
    }

    /** Puts a connection in auto-commit mode with its {@link #networkTimeout()}; closes it on failure. */
    Connection setUp(Connection connection) throws SQLException {
        try {
            connection.setAutoCommit(true);
            setNetworkTimeout(connection, CONNECTORS, networkTimeout());
        } catch (SQLException | RuntimeException e) {
            closeQuietly(connection);
            throw e;
        }
        return connection;
    }

    /**
     * How long a connection waits for an answer before the driver gives up on it: the engine's
     * timeout where the server cancels statements before that ({@link #statementTimeout}); where
     * the driver cancels them instead (a JDBC query timeout, in whole seconds), a second past the
     * query timeout, so that its cancel reaches the server first. A connection given up on while a
     * statement waits (for a row lock, say) leaves the statement running on the server, which may
     * then grant a lock to an attempt that is gone.
     *
     * @return the network timeout of this source's connections
     */
    Duration networkTimeout() {
        return serverTimesStatements() ? timeout : Duration.ofSeconds(Db.queryTimeoutSeconds(timeout) + 1);
    }

    /**
     * The server-side cancel of a statement comes a little before the connection's network timeout,
     * so that the server's answer ("canceling statement", connection still usable) arrives before the
     * driver gives up on the socket and the connection with it: a quarter of the timeout, at most 1 s,
     * earlier.
     *
     * @param timeout the engine's timeout
     * @return the statement timeout to set on the server
     */
    static Duration statementTimeout(Duration timeout) {
        Duration margin = timeout.dividedBy(4);
        if (margin.compareTo(Duration.ofSeconds(1)) > 0) {
            margin = Duration.ofSeconds(1);
        }
        return Duration.ofMillis(Math.max(1, timeout.minus(margin).toMillis()));
    }

    static void setNetworkTimeout(Connection connection, Executor executor, Duration timeout) {
        try {
            connection.setNetworkTimeout(executor, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        } catch (SQLException | UnsupportedOperationException e) {
            // H2 in-process and some drivers have no network timeout; their statements still have a query timeout
        }
    }

    private static void closeLater(Future<Connection> future) {
        try {
            closeQuietly(future.get());
        } catch (InterruptedException | ExecutionException | java.util.concurrent.CancellationException e) {
            // the attempt failed by itself: nothing to close
        }
    }

    static void closeQuietly(Connection connection) {
        if (connection == null) {
            return;
        }
        try {
            connection.close();
        } catch (SQLException | RuntimeException e) {
            // a connection that fails to close is gone anyway
        }
    }

    @FunctionalInterface
    interface Opener {
        Connection open() throws SQLException;
    }

    /**
     * Connections of the application's data source. A pool hands out a connection in microseconds,
     * so a borrow asks it on the caller's thread; but a pool whose database went away may wait for
     * a new connection longer than the engine's timeout (HikariCP: {@code connectionTimeout}, 30 s
     * by default). So the first borrow, and every borrow after a connection failed until one works
     * again, asks on a connector thread and gives up at the timeout.
     */
    static final class FromDataSource extends ConnectionSource {
        private final DataSource dataSource;
        /** Whether borrows are timed on a connector thread: at first, and after a failure. */
        private volatile boolean guarded = true;

        FromDataSource(String describe, Duration timeout, DataSource dataSource) {
            super(describe, timeout);
            this.dataSource = dataSource;
        }

        @Override
        Connection borrow() throws SQLException {
            if (guarded) {
                return open(dataSource::getConnection);
            }
            try {
                return setUp(dataSource.getConnection());
            } catch (SQLException | RuntimeException e) {
                guarded = true;
                throw e;
            }
        }

        @Override
        void giveBack(Connection connection, boolean broken) {
            guarded = broken;
            closeQuietly(connection);
        }

        /** @return whether the next borrow is timed on a connector thread */
        boolean guarded() {
            return guarded;
        }

        @Override
        Connection dedicated() throws SQLException {
            return open(dataSource::getConnection);
        }

        @Override
        public void close() {
            // the application owns its data source
        }
    }

    /**
     * At most {@code size} pooled connections to a JDBC URL. On PostgreSQL, once the connections are
     * known to keep their sessions ({@link #sessionsLast()}), each gets the engine's timeout as its
     * {@code statement_timeout}: the server cancels a statement that runs too long, as a JDBC query
     * timeout would, without the driver scheduling and cancelling a timer task around every
     * statement.
     */
    private static final class BuiltInPool extends ConnectionSource {
        private final String url;
        private final boolean postgres;
        private volatile boolean serverTimeout;
        private final LinkedBlockingDeque<Connection> idle = new LinkedBlockingDeque<>();
        private final LinkedBlockingDeque<Connection> idleSessions = new LinkedBlockingDeque<>();
        /** The connection each thread gave back last: taken again when idle, so a thread keeps its database session. */
        private final ThreadLocal<Connection> lastGivenBack = new ThreadLocal<>();

        private final int size;
        private final Semaphore permits;
        private volatile boolean closed;

        BuiltInPool(String url, String describe, Duration timeout, int size) {
            super(describe, timeout);
            this.url = url;
            this.postgres = url.startsWith("jdbc:postgresql:");
            this.size = size;
            this.permits = new Semaphore(size);
        }

        @Override
        boolean serverTimesStatements() {
            return serverTimeout;
        }

        private Connection connect() throws SQLException {
            return open(() -> {
                Connection connection = driverConnection();
                if (serverTimeout) {
                    try {
                        timeOnServer(connection);
                    } catch (SQLException | RuntimeException e) {
                        closeQuietly(connection);
                        throw e;
                    }
                }
                return connection;
            });
        }

        private void timeOnServer(Connection connection) throws SQLException {
            try (Statement statement = connection.createStatement()) {
                statement.execute(
                        "SET statement_timeout = " + statementTimeout(timeout).toMillis());
            }
        }

        /** From now on the server times statements: on new connections, and on those idle now (the engine has not started yet). */
        @Override
        void sessionsLast() {
            if (!postgres || serverTimeout) {
                return;
            }
            serverTimeout = true;
            List<Connection> opened = new ArrayList<>();
            idle.drainTo(opened);
            for (Connection connection : opened) {
                try {
                    timeOnServer(connection);
                    setNetworkTimeout(connection, CONNECTORS, networkTimeout());
                    idle.offerLast(connection);
                } catch (SQLException | RuntimeException e) {
                    closeQuietly(connection);
                }
            }
        }

        @Override
        void adopt(Connection connection) {
            if (connection == null) {
                return;
            }
            if (closed || idle.size() >= size || !idle.offerLast(connection)) {
                closeQuietly(connection);
            } else if (closed && idle.remove(connection)) {
                closeQuietly(connection);
            }
        }

        /** A new connection from the driver, whose errors may echo the URL: shown without its secrets. */
        private Connection driverConnection() throws SQLException {
            try {
                return DriverManager.getConnection(url);
            } catch (SQLException e) {
                Throwable shown = ScrubbedErrors.scrubAny(e, url);
                if (shown == e) {
                    throw e;
                }
                SQLException scrubbed =
                        new SQLException(shown.getMessage(), e.getSQLState(), e.getErrorCode(), shown.getCause());
                scrubbed.setStackTrace(e.getStackTrace());
                throw scrubbed;
            }
        }

        @Override
        Connection borrow() throws SQLException {
            if (closed) {
                throw new IllegalStateException("the engine of " + describe + " is closed");
            }
            boolean interrupted = false;
            long deadline = System.nanoTime() + timeout.toNanos();
            try {
                while (true) {
                    try {
                        if (permits.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                            break;
                        }
                        throw new EngineUnavailableException(
                                "no free connection to " + describe + " within " + timeout.toMillis()
                                        + "ms (all pooled connections busy; raise cerberus.poolSize)",
                                null);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                Connection last = lastGivenBack.get();
                if (last != null && idle.remove(last)) {
                    return last;
                }
                Connection connection = idle.pollFirst();
                if (connection != null) {
                    return connection;
                }
                return connect();
            } catch (SQLException | RuntimeException e) {
                permits.release();
                throw e;
            }
        }

        @Override
        void giveBack(Connection connection, boolean broken) {
            try {
                if (broken || closed) {
                    closeQuietly(connection);
                } else {
                    lastGivenBack.set(connection);
                    idle.offerFirst(connection);
                    if (closed && idle.remove(connection)) {
                        closeQuietly(connection);
                    }
                }
            } finally {
                permits.release();
            }
        }

        @Override
        Connection dedicated() throws SQLException {
            return connect();
        }

        @Override
        Connection idleSession() {
            return closed ? null : idleSessions.pollFirst();
        }

        /** Keeps at most as many idle session connections as the pool has connections. */
        @Override
        void keepSession(Connection connection) {
            if (closed || idleSessions.size() >= size) {
                closeQuietly(connection);
                return;
            }
            idleSessions.offerFirst(connection);
            if (closed && idleSessions.remove(connection)) {
                closeQuietly(connection);
            }
        }

        @Override
        void purgeIdleSessions() {
            closeAll(idleSessions);
        }

        @Override
        boolean closeEndsSession() {
            return true;
        }

        @Override
        void purgeIdle() {
            closeAll(idle);
        }

        @Override
        public void close() {
            closed = true;
            closeAll(idle);
            closeAll(idleSessions);
        }

        private static void closeAll(LinkedBlockingDeque<Connection> connections) {
            Connection connection;
            while ((connection = connections.pollFirst()) != null) {
                closeQuietly(connection);
            }
        }
    }
}
