package io.cerberus.jdbc;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * PostgreSQL {@code LISTEN} on the engine's channel, on one dedicated connection: a release of a
 * lock that a client was refused notifies the channel with the lock's key (see
 * {@link LeaseRowEngine}), as do releases of session locks and idempotency records, and this wakes
 * the waiters of that key in this JVM at once. When the connection fails it is opened again after
 * a second; waiters meanwhile fall back to their backoff, so a lost notification only delays,
 * never loses, a wake-up.
 */
final class PgListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PgListener.class.getName());
    private final ConnectionSource source;
    private final String channel;
    private final Thread thread;
    private volatile boolean closed;
    private volatile Connection connection;

    private PgListener(ConnectionSource source, String channel) {
        this.source = source;
        this.channel = channel;
        this.thread = new Thread(this::run, "cerberus-jdbc-listen-" + channel);
        thread.setDaemon(true);
    }

    /**
     * @return a started listener, or {@code null} when the PostgreSQL driver on the class path
     *     cannot listen (waiters then rely on their backoff)
     */
    static PgListener start(ConnectionSource source, String channel) {
        try {
            Class.forName("org.postgresql.PGConnection");
        } catch (ClassNotFoundException | LinkageError e) {
            LOG.log(Level.INFO, "no PostgreSQL driver classes: waiters on " + source.describe + " poll with backoff");
            return null;
        }
        PgListener listener = new PgListener(source, channel);
        listener.thread.start();
        return listener;
    }

    private void run() {
        while (!closed) {
            try {
                Connection c = source.dedicated();
                connection = c;
                if (closed) {
                    break;
                }
                try (Statement statement = c.createStatement()) {
                    statement.execute("LISTEN " + channel);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!closed) {
                    PGNotification[] notifications = pg.getNotifications(500);
                    if (notifications != null) {
                        for (PGNotification notification : notifications) {
                            Wakeups.JVM.signal(notification.getParameter());
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!closed) {
                    LOG.log(Level.DEBUG, "listening on " + source.describe + " failed, again in 1s: " + e);
                    sleepQuietly();
                }
            } finally {
                ConnectionSource.closeQuietly(connection);
                connection = null;
            }
        }
    }

    private void sleepQuietly() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ConnectionSource.closeQuietly(connection);
    }
}
