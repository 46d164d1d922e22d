package io.cerberus.jdbc;

import io.cerberus.testkit.Executables;
import io.cerberus.testkit.FreePorts;
import io.cerberus.testkit.ManagedProcess;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real PostgreSQL or MariaDB server for tests, on a free loopback port with a temporary data
 * directory (initdb / mariadb-install-db), never the system service. Run as the servers' own
 * system users when the tests run as root (PostgreSQL refuses root).
 */
abstract class DatabaseServer implements AutoCloseable {
    final int port = FreePorts.next();
    final Path dataDir;
    private ManagedProcess process;

    DatabaseServer(String name) {
        try {
            dataDir = Files.createTempDirectory("cerberus-" + name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the JDBC URL of the database, with credentials */
    abstract String url();

    abstract List<String> serverCommand();

    abstract String name();

    final void startProcess() {
        process = ManagedProcess.start(name() + "-" + port, serverCommand());
        Poll.until(name() + " on port " + port + " to accept a login", TestTimes.millis(60_000), () -> {
            if (!process.isAlive()) {
                throw new AssertionError(name() + " ended at start:" + process.diagnostics());
            }
            try (Connection connection = DriverManager.getConnection(url())) {
                return connection.isValid(2);
            } catch (SQLException e) {
                return false;
            }
        });
    }

    /** Kills the server with SIGKILL (its data stays). */
    void kill() {
        process.kill(TestTimes.millis(10_000));
    }

    /** Starts the server again on its old data and port. */
    void restart() {
        kill();
        startProcess();
    }

    @Override
    public void close() {
        if (process != null) {
            process.close();
        }
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    static List<String> as(String user, List<String> command) {
        if (!isRoot()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of(Executables.require("setpriv", "util-linux").toString(),
                "--reuid=" + user, "--regid=" + user, "--init-groups", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    static void chown(Path path, String user) {
        if (!isRoot()) {
            return;
        }
        try {
            UserPrincipalLookupService lookup = path.getFileSystem().getUserPrincipalLookupService();
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            view.setOwner(lookup.lookupPrincipalByName(user));
            GroupPrincipal group = lookup.lookupPrincipalByGroupName(user);
            view.setGroup(group);
        } catch (IOException e) {
            throw new UncheckedIOException("could not give " + path + " to " + user, e);
        }
    }

    static void run(List<String> command, String what) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] output = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError(what + " failed: " + String.join(" ", command) + "\n" + new String(output));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(what + " could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted: " + what, e);
        }
    }

    /** PostgreSQL from the Debian package {@code postgresql}. */
    static final class Postgres extends DatabaseServer {
        Postgres() {
            super("postgres");
        }

        static Postgres start() {
            Postgres server = new Postgres();
            chown(server.dataDir, "postgres");
            run(as("postgres", List.of(Executables.require("initdb", "postgresql").toString(), "-D", server.dataDir.toString(),
                    "-U", "cerberus", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")), "initdb");
            server.startProcess();
            return server;
        }

        @Override
        String name() {
            return "postgres";
        }

        @Override
        List<String> serverCommand() {
            return as("postgres", List.of(Executables.require("postgres", "postgresql").toString(), "-D", dataDir.toString(),
                    "-p", Integer.toString(port), "-h", "127.0.0.1", "-k", dataDir.toString(), "-F",
                    "-c", "max_connections=200", "-c", "shared_buffers=32MB"));
        }

        @Override
        String url() {
            return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=cerberus";
        }
    }

    /** MariaDB from the Debian package {@code mariadb-server}. */
    static final class MariaDb extends DatabaseServer {
        MariaDb() {
            super("mariadb");
        }

        static MariaDb start() {
            MariaDb server = new MariaDb();
            chown(server.dataDir, "mysql");
            run(List.of(Executables.require("mariadb-install-db", "mariadb-server").toString(), "--no-defaults",
                    "--datadir=" + server.dataDir, "--user=" + (isRoot() ? "mysql" : System.getProperty("user.name")),
                    "--auth-root-authentication-method=normal", "--skip-test-db"), "mariadb-install-db");
            server.startProcess();
            return server;
        }

        @Override
        String name() {
            return "mariadb";
        }

        @Override
        List<String> serverCommand() {
            List<String> command = new ArrayList<>(List.of(Executables.require("mariadbd", "mariadb-server").toString(),
                    "--no-defaults", "--datadir=" + dataDir, "--port=" + port, "--bind-address=127.0.0.1",
                    "--socket=" + dataDir.resolve("mysqld.sock"), "--pid-file=" + dataDir.resolve("mysqld.pid"),
                    "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
                    "--innodb-flush-log-at-trx-commit=2", "--max-connections=300", "--skip-log-bin"));
            if (isRoot()) {
                command.add("--user=mysql");
            }
            return command;
        }

        @Override
        String url() {
            return "jdbc:mariadb://127.0.0.1:" + port + "/mysql?user=root";
        }
    }
}
