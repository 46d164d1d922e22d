package io.cerberus.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.function.Supplier;

/**
 * The one connection a {@link SqlServer} reads its statistics on (statements run, rows, size),
 * opened at the first read and kept, so that reading them costs no login; closed before the
 * server. Not thread-safe: its server's methods synchronize their reads.
 */
final class StatsConnection implements AutoCloseable {
    private final Supplier<String> jdbcUrl;
    private Connection connection;

    /** @param jdbcUrl the server's JDBC URL, read at the first use */
    StatsConnection(Supplier<String> jdbcUrl) {
        this.jdbcUrl = jdbcUrl;
    }

    /** @return the connection, opened now if it is not yet */
    Connection get() throws SQLException {
        if (connection == null) {
            connection = DriverManager.getConnection(jdbcUrl.get());
        }
        return connection;
    }

    /** Closes the connection if it was opened; a failure is left alone, as the server is stopped next. */
    @Override
    public void close() {
        try {
            if (connection != null) {
                connection.close();
            }
        } catch (SQLException e) {
            // the server goes next
        }
    }
}
