package io.cerberus.jdbc;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.servers.Passwords;
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
 *
 * <p>Not open to the other users of the machine: over TCP only the user {@code cerberus} logs in,
 * with a password drawn at start and handed out in {@link #url()}; the administrators' logins
 * (PostgreSQL's peer authentication, MariaDB's root by {@code unix_socket}) take the server's unix
 * socket, in the data directory only its owner may enter (mode 0700).
 */
abstract class DatabaseServer implements AutoCloseable {
    /** The one TCP login of every server: an administrator, to create databases, users and grants. */
    static final String USER = "cerberus";
    final int port = FreePorts.next();
    final Path dataDir;
    final String password = Passwords.random();
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
            Path passwordFile = Passwords.ownerOnlyFile(server.password, "postgres");
            try {
                // scram over TCP; the socket (in the private data directory) only for the postgres system user
                run(as("postgres", List.of(Executables.require("initdb", "postgresql").toString(), "-D", server.dataDir.toString(),
                        "-U", USER, "--pwfile=" + passwordFile, "--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8",
                        "--no-sync", "--no-instructions")), "initdb");
            } finally {
                passwordFile.toFile().delete();
            }
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
            return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=" + USER + "&password=" + password;
        }
    }

    /**
     * MariaDB from the Debian package {@code mariadb-server}. Its root (and the account of the
     * system user it runs as) logs in only by {@code unix_socket} through the private socket; there
     * are no anonymous users. The first start creates {@code cerberus@127.0.0.1} with the password,
     * from an init file only the server's user may read, deleted once the server is up.
     */
    static final class MariaDb extends DatabaseServer {
        private Path initFile;

        MariaDb() {
            super("mariadb");
        }

        static MariaDb start() {
            MariaDb server = new MariaDb();
            chown(server.dataDir, "mysql");
            run(List.of(Executables.require("mariadb-install-db", "mariadb-server").toString(), "--no-defaults",
                    "--datadir=" + server.dataDir, "--user=" + (isRoot() ? "mysql" : System.getProperty("user.name")),
                    "--auth-root-authentication-method=socket", "--skip-test-db"), "mariadb-install-db");
            server.initFile = Passwords.ownerOnlyFile("CREATE USER '" + USER + "'@'127.0.0.1' IDENTIFIED BY '" + server.password
                    + "';\nGRANT ALL PRIVILEGES ON *.* TO '" + USER + "'@'127.0.0.1' WITH GRANT OPTION;\n", "mysql");
            try {
                server.startProcess();
            } finally {
                server.initFile.toFile().delete();
                server.initFile = null;
            }
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
            if (initFile != null) {
                command.add("--init-file=" + initFile);
            }
            return command;
        }

        @Override
        String url() {
            return "jdbc:mariadb://127.0.0.1:" + port + "/mysql?user=" + USER + "&password=" + password;
        }
    }
}
