package io.cerberus.bench;

import io.cerberus.servers.MariaDbServer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The MariaDB of a run: a {@link MariaDbServer} with a database {@code bench} and 400
 * connections, and what the report reads from it. Like the PostgreSQL of the bench it does not
 * wait for the disk on commit ({@code innodb_flush_log_at_trx_commit=2}: the log is written at
 * each commit and flushed once a second). Its buffer pool is 256 MB: InnoDB reads its pages past
 * the OS cache, and with 64 MB the tables the {@code many-names} cells leave behind pushed the
 * renewals of {@code held-locks} onto the disk; its redo log keeps MariaDB's default size (96 MB).
 * Statements are counted by the server's {@code Questions} status.
 */
final class BenchMariaDb implements SqlServer {
    private final MariaDbServer server;
    private final StatsConnection stats = new StatsConnection(this::jdbcUrl);
    private long statsReads;

    private BenchMariaDb(MariaDbServer server) {
        this.server = server;
    }

    static BenchMariaDb start() {
        return new BenchMariaDb(MariaDbServer.builder()
                .database("bench")
                .maxConnections(400)
                .setting("innodb-buffer-pool-size", "256M")
                .setting("innodb-log-file-size", "96M")
                .start());
    }

    @Override
    public String jdbcUrl() {
        return server.uri();
    }

    @Override
    public String product() {
        return "MariaDB";
    }

    @Override
    public boolean countsStatements() {
        return true;
    }

    /** @return the statements clients sent ({@code Questions}), less this count's own reads */
    @Override
    public synchronized long statements() {
        try (Statement statement = stats.get().createStatement();
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
            try (Statement statement = stats.get().createStatement();
                    ResultSet names = statement.executeQuery(
                            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'bench'")) {
                while (names.next()) {
                    tables.add(names.getString(1));
                }
            }
            long rows = 0;
            for (String table : tables) {
                try (Statement statement = stats.get().createStatement();
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
        try (Statement statement = stats.get().createStatement();
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
        stats.close();
        server.close();
    }
}
