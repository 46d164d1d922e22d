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
 * The MariaDB server of a run: {@code mariadb-install-db} into a temporary directory and
 * {@code mariadbd} on a free loopback port, run as the {@code mysql} user when the bench runs as
 * root, with a database {@code bench}. Like the PostgreSQL of the bench it does not wait for the
 * disk on commit ({@code innodb_flush_log_at_trx_commit=2}: the log is written at each commit and
 * flushed once a second). Its buffer pool is 256 MB: InnoDB reads its pages past the OS cache,
 * and with 64 MB the tables the {@code many-names} cells leave behind pushed the renewals of
 * {@code held-locks} onto the disk. Statements are counted by the server's {@code Questions} status.
 * Over TCP only {@code cerberus@127.0.0.1} logs in, with a password drawn at start and created from
 * an init file only the server's user may read, deleted once the server is up; root logs in only by
 * {@code unix_socket}, through the socket in the private data directory; no anonymous users.
 */
final class MariaDbProcess implements SqlServer {
    private final int port;
    private final String password;
    private final Path dataDir;
    private final ManagedProcess process;
    private Connection stats;
    private long statsReads;

    private MariaDbProcess(int port, String password, Path dataDir, ManagedProcess process) {
        this.port = port;
        this.password = password;
        this.dataDir = dataDir;
        this.process = process;
    }

    static MariaDbProcess start() {
        try {
            int port = FreePorts.next();
            Path dataDir = Files.createTempDirectory("cerberus-bench-mariadb-");
            ServerSetup.chownTo(dataDir, "mysql");
            ServerSetup.run(List.of(Executables.require("mariadb-install-db", "mariadb-server").toString(), "--no-defaults",
                    "--datadir=" + dataDir, "--user=" + (ServerSetup.isRoot() ? "mysql" : System.getProperty("user.name")),
                    "--auth-root-authentication-method=socket", "--skip-test-db"));
            String password = Passwords.random();
            Path initFile = Passwords.ownerOnlyFile("CREATE USER 'cerberus'@'127.0.0.1' IDENTIFIED BY '" + password + "';\n"
                    + "GRANT ALL PRIVILEGES ON *.* TO 'cerberus'@'127.0.0.1';\nCREATE DATABASE IF NOT EXISTS bench;\n", "mysql");
            List<String> command = new ArrayList<>(List.of(Executables.require("mariadbd", "mariadb-server").toString(),
                    "--no-defaults", "--datadir=" + dataDir, "--port=" + port, "--bind-address=127.0.0.1",
                    "--socket=" + dataDir.resolve("mysqld.sock"), "--pid-file=" + dataDir.resolve("mysqld.pid"),
                    "--innodb-buffer-pool-size=256M", "--innodb-flush-log-at-trx-commit=2", "--max-connections=400", "--skip-log-bin",
                    "--init-file=" + initFile));
            if (ServerSetup.isRoot()) {
                command.add("--user=mysql");
            }
            ManagedProcess process = ManagedProcess.start("mariadb-" + port, command);
            MariaDbProcess server = new MariaDbProcess(port, password, dataDir, process);
            try {
                Await.until("mariadbd on port " + port + " to accept a login", Duration.ofSeconds(60), process, () -> {
                    try (Connection connection = DriverManager.getConnection(server.jdbcUrl())) {
                        return connection.isValid(2);
                    } catch (SQLException e) {
                        return false;
                    }
                });
            } catch (RuntimeException e) {
                server.close();
                throw e;
            } finally {
                Files.deleteIfExists(initFile);
            }
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String jdbcUrl() {
        return "jdbc:mariadb://127.0.0.1:" + port + "/bench?user=cerberus&password=" + password;
    }

    @Override
    public String product() {
        return "MariaDB";
    }

    @Override
    public boolean countsStatements() {
        return true;
    }

    private Connection stats() throws SQLException {
        if (stats == null) {
            stats = DriverManager.getConnection(jdbcUrl());
        }
        return stats;
    }

    /** @return the statements clients sent ({@code Questions}), less this count's own reads */
    @Override
    public synchronized long statements() {
        try (Statement statement = stats().createStatement();
                ResultSet rows = statement.executeQuery("SHOW GLOBAL STATUS LIKE 'Questions'")) {
            rows.next();
            return rows.getLong(2) - ++statsReads;
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the Questions status: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized long rows() {
        try {
            List<String> tables = new ArrayList<>();
            try (Statement statement = stats().createStatement();
                    ResultSet names = statement.executeQuery("SELECT table_name FROM information_schema.tables WHERE table_schema = 'bench'")) {
                while (names.next()) {
                    tables.add(names.getString(1));
                }
            }
            long rows = 0;
            for (String table : tables) {
                try (Statement statement = stats().createStatement();
                        ResultSet count = statement.executeQuery("SELECT count(*) FROM bench.`" + table + "`")) {
                    count.next();
                    rows += count.getLong(1);
                }
            }
            statsReads += 1 + tables.size();
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException("could not count the rows of the lock tables: " + e.getMessage(), e);
        }
    }

    /** @return the bytes of the bench database's tables and indexes, as InnoDB reports them (estimates, page-granular) */
    @Override
    public synchronized long databaseSize() {
        try (Statement statement = stats().createStatement();
                ResultSet size = statement.executeQuery("SELECT coalesce(sum(data_length + index_length), 0)"
                        + " FROM information_schema.tables WHERE table_schema = 'bench'")) {
            size.next();
            statsReads++;
            return size.getLong(1);
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
