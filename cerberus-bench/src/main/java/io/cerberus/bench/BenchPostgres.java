package io.cerberus.bench;

import io.cerberus.servers.Executables;
import io.cerberus.servers.PostgresServer;
import io.cerberus.servers.ServerException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The PostgreSQL of a run: a {@link PostgresServer} without fsync, with 400 connections and 64 MB
 * of shared buffers, and what the report reads from it. {@code pg_stat_statements} is loaded when
 * installed, to count the statements of a cycle.
 */
final class BenchPostgres implements SqlServer {
    private final PostgresServer server;
    private final boolean statementStats;
    private final StatsConnection stats = new StatsConnection(this::jdbcUrl);
    private long statsReads;

    private BenchPostgres(PostgresServer server, boolean statementStats) {
        this.server = server;
        this.statementStats = statementStats;
    }

    static BenchPostgres start() {
        Path postgres;
        try {
            postgres = Executables.require("postgres", "postgresql").toRealPath();
        } catch (IOException e) {
            throw new ServerException("could not resolve the postgres program: " + e, e);
        }
        boolean statementStats = Files.exists(postgres.getParent().getParent().resolve("lib/pg_stat_statements.so"));
        PostgresServer.Builder builder =
                PostgresServer.builder().maxConnections(400).setting("shared_buffers", "64MB");
        if (statementStats) {
            builder.setting("shared_preload_libraries", "pg_stat_statements");
        }
        BenchPostgres server = new BenchPostgres(builder.start(), statementStats);
        try {
            if (statementStats) {
                server.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            }
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** @return the JDBC URL of the database, with its user and password */
    @Override
    public String jdbcUrl() {
        return server.uri();
    }

    @Override
    public String product() {
        return "PostgreSQL";
    }

    /** @return whether {@link #statements()} counts (pg_stat_statements is installed) */
    @Override
    public boolean countsStatements() {
        return statementStats;
    }

    /** @return the statements the server has run, from pg_stat_statements, less the reads of this count */
    @Override
    public synchronized long statements() {
        try {
            try (Statement statement = stats.get().createStatement();
                    ResultSet rows = statement.executeQuery("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements")) {
                rows.next();
                return rows.getLong(1) - statsReads++;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read pg_stat_statements: " + e.getMessage(), e);
        }
    }

    /** @return the rows of every table of the bench's database (the lock tables of Cerberus and the peers) */
    @Override
    public synchronized long rows() {
        try {
            List<String> tables = new ArrayList<>();
            try (Statement statement = stats.get().createStatement();
                    ResultSet names = statement.executeQuery(
                            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables"
                                    + " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")) {
                while (names.next()) {
                    tables.add(names.getString(1));
                }
            }
            long rows = 0;
            for (String table : tables) {
                try (Statement statement = stats.get().createStatement();
                        ResultSet count = statement.executeQuery("SELECT count(*) FROM " + table)) {
                    count.next();
                    rows += count.getLong(1);
                }
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException("could not count the rows of the lock tables: " + e.getMessage(), e);
        }
    }

    /** @return the bytes of the bench's database on disk ({@code pg_database_size}; dead rows count until vacuumed) */
    @Override
    public synchronized long databaseSize() {
        try {
            try (Statement statement = stats.get().createStatement();
                    ResultSet size = statement.executeQuery("SELECT pg_database_size(current_database())")) {
                size.next();
                return size.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the database size: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        stats.close();
        server.close();
    }
}
