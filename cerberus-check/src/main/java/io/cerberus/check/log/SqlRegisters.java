package io.cerberus.check.log;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The registers of a run kept in a SQL database ({@code --register sql}): one row each in {@value #TABLE}, reached
 * with plain JDBC (the driver is the engine's, on the command's class path). Each thread has a connection of its own
 * in auto-commit mode, dropped after a failure and opened again by the next call, so a restarted server is reached
 * again.
 */
final class SqlRegisters implements Registers {
    static final String TABLE = "cerberus_check_registers";

    private final String url;
    private final List<SqlRegister> registers = new ArrayList<>();
    private final ThreadLocal<Connection> connections = new ThreadLocal<>();
    private final List<Connection> opened = new ArrayList<>();

    SqlRegisters(String url, List<String> names, boolean fenced) {
        this.url = JdbcUrls.withTimeouts(url);
        for (String name : names) {
            registers.add(new SqlRegister(this, name, fenced ? null : Registers.UNFENCED));
        }
    }

    @Override
    public List<Register> registers() {
        return List.copyOf(registers);
    }

    @Override
    public void reset() {
        onConnection(connection -> {
            try (Statement create = connection.createStatement()) {
                create.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (name VARCHAR(200) PRIMARY KEY,"
                        + " reg_value BIGINT NOT NULL, accepted BIGINT NOT NULL,"
                        + " fence_epoch BIGINT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0)");
            }
            for (SqlRegister register : registers) {
                register.reset(connection);
            }
            return null;
        });
    }

    /** A step on this thread's connection. */
    interface Step<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * @return what the step gave, on this thread's connection (opened if it has none)
     * @throws Unreachable if the database failed: the connection is dropped, the next call opens another
     */
    <T> T onConnection(Step<T> step) {
        Connection connection = connections.get();
        try {
            if (connection == null) {
                connection = DriverManager.getConnection(url);
                connection.setAutoCommit(true);
                connections.set(connection);
                synchronized (opened) {
                    opened.add(connection);
                }
            }
            return step.run(connection);
        } catch (SQLException e) {
            if (connection != null) {
                connections.remove();
                closeQuietly(connection);
                synchronized (opened) {
                    opened.remove(connection);
                }
            }
            throw new Unreachable("the register database failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        synchronized (opened) {
            opened.forEach(SqlRegisters::closeQuietly);
            opened.clear();
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            // closing a connection to a server that went away: nothing to keep
        }
    }
}
