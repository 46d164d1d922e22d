package io.cerberus.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** A SQL server of a run (PostgreSQL, MariaDB): what the JDBC group reads from it. */
interface SqlServer extends AutoCloseable {
    /** @return the JDBC URL of the bench's database, with its user and query already begun ({@code ?user=...}) */
    String jdbcUrl();

    /** @return the server's product name, for the report ({@code PostgreSQL}, {@code MariaDB}) */
    String product();

    /** Runs one statement, such as the DDL of a peer's table. */
    default void execute(String sql) {
        try (Connection connection = DriverManager.getConnection(jdbcUrl());
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("could not run " + sql + ": " + e.getMessage(), e);
        }
    }

    /** @return the server's name and version, for the report */
    default String version() {
        try (Connection connection = DriverManager.getConnection(jdbcUrl())) {
            return product() + " " + connection.getMetaData().getDatabaseProductVersion();
        } catch (SQLException e) {
            return product() + " (version unknown)";
        }
    }

    /** @return whether {@link #statements()} counts */
    boolean countsStatements();

    /** @return the statements the server has run, less the reads of this count */
    long statements();

    /** @return the rows of every table of the bench's database (the lock tables of Cerberus and the peers) */
    long rows();

    /** @return the bytes of the bench's database */
    long databaseSize();

    @Override
    void close();
}
