package io.cerberus.bench;

import io.cerberus.servers.Await;
import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.Passwords;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The PostgreSQL server of a run: initdb into a temporary directory and {@code postgres} on a free
 * loopback port without fsync, run as the {@code postgres} user when the bench runs as root (the
 * minimum of cerberus-jdbc's test DatabaseServer.Postgres, which PostgreSQL's refusal of root needs).
 * {@code pg_stat_statements} is loaded when installed, to count the statements of a cycle. Over TCP
 * the user {@code cerberus} logs in with scram-sha-256 and a password drawn at start; the unix
 * socket, in the data directory only the server's user may enter, takes peer authentication.
 */
final class PostgresProcess implements SqlServer {
    private final int port;
    private final String password;
    private final Path dataDir;
    private final ManagedProcess process;
    private final boolean statementStats;
    private Connection stats;
    private long statsReads;

    private PostgresProcess(int port, String password, Path dataDir, ManagedProcess process, boolean statementStats) {
        this.port = port;
        this.password = password;
        this.dataDir = dataDir;
        this.process = process;
        this.statementStats = statementStats;
    }

    static PostgresProcess start() {
        try {
            int port = FreePorts.next();
            Path dataDir = Files.createTempDirectory("cerberus-bench-postgres-");
            Path postgres = Executables.require("postgres", "postgresql").toRealPath();
            boolean statementStats = Files.exists(postgres.getParent().getParent().resolve("lib/pg_stat_statements.so"));
            ServerSetup.chownTo(dataDir, "postgres");
            String password = Passwords.random();
            Path passwordFile = Passwords.ownerOnlyFile(password, "postgres");
            try {
                ServerSetup.run(asPostgres(List.of(Executables.require("initdb", "postgresql").toString(), "-D", dataDir.toString(),
                        "-U", "cerberus", "--pwfile=" + passwordFile, "--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8",
                        "--no-sync", "--no-instructions")));
            } finally {
                Files.deleteIfExists(passwordFile);
            }
            List<String> command = new ArrayList<>(List.of(postgres.toString(), "-D", dataDir.toString(), "-p", Integer.toString(port),
                    "-h", "127.0.0.1", "-k", dataDir.toString(), "-F", "-c", "max_connections=400", "-c", "shared_buffers=64MB"));
            if (statementStats) {
                command.addAll(List.of("-c", "shared_preload_libraries=pg_stat_statements"));
            }
            ManagedProcess process = ManagedProcess.start("postgres-" + port, asPostgres(command));
            PostgresProcess server = new PostgresProcess(port, password, dataDir, process, statementStats);
            try {
                Await.until("postgres on port " + port + " to accept a login", Duration.ofSeconds(60), process, () -> {
                    try (Connection connection = DriverManager.getConnection(server.jdbcUrl())) {
                        return connection.isValid(2);
                    } catch (SQLException e) {
                        return false;
                    }
                });
                if (statementStats) {
                    server.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
                }
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> asPostgres(List<String> command) {
        if (!ServerSetup.isRoot()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of(Executables.require("setpriv", "util-linux").toString(), "--reuid=postgres",
                "--regid=postgres", "--init-groups", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** @return the JDBC URL of the database, with its user and password */
    @Override
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=cerberus&password=" + password;
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
            if (stats == null) {
                stats = DriverManager.getConnection(jdbcUrl());
            }
            try (Statement statement = stats.createStatement();
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
            if (stats == null) {
                stats = DriverManager.getConnection(jdbcUrl());
            }
            List<String> tables = new ArrayList<>();
            try (Statement statement = stats.createStatement();
                    ResultSet names = statement.executeQuery("SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables"
                            + " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")) {
                while (names.next()) {
                    tables.add(names.getString(1));
                }
            }
            long rows = 0;
            for (String table : tables) {
                try (Statement statement = stats.createStatement(); ResultSet count = statement.executeQuery("SELECT count(*) FROM " + table)) {
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
            if (stats == null) {
                stats = DriverManager.getConnection(jdbcUrl());
            }
            try (Statement statement = stats.createStatement();
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
        try {
            if (stats != null) {
                stats.close();
            }
        } catch (SQLException e) {
            // the server goes next
        }
        process.close();
        TempDirectory.delete(dataDir);
    }
}
