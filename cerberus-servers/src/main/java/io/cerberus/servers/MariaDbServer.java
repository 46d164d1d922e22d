package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A real MariaDB on a loopback port (see {@link DatabaseServer} for what every SQL server here
 * shares): {@code mariadb-install-db} into the data directory, root logging in by
 * {@code unix_socket} only and no anonymous users; then, before the server first listens, the
 * login user {@code USER@127.0.0.1} with every privilege and the database are created in
 * bootstrap mode (the password goes in on standard input, never into a file or a command line);
 * then {@code mariadbd --bind-address=127.0.0.1 --skip-name-resolve} with a 32 MB buffer pool.
 * It serves once {@code mariadb-admin status} logs in. Not thread-safe.
 */
public final class MariaDbServer extends DatabaseServer {

    private final Path tmpDir;

    private MariaDbServer(Builder builder, int port, String password) {
        super("mariadbd", port, command(builder, port), builder, password);
        this.tmpDir = builder.tmpDir;
    }

    /** Kills the server and deletes its data directory if it was created here, and its temporary directory. */
    @Override
    public void close() {
        try {
            super.close();
        } finally {
            Directories.deleteQuietly(tmpDir);
        }
    }

    private static List<String> command(Builder builder, int port) {
        List<String> command = new ArrayList<>(List.of(
                mariadbd(),
                "--no-defaults",
                "--datadir=" + builder.dataDir(),
                "--port=" + port,
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--socket=" + builder.dataDir().resolve("mysqld.sock"),
                "--tmpdir=" + builder.tmpDir,
                "--pid-file=" + builder.dataDir().resolve("mysqld.pid"),
                "--skip-log-bin",
                "--innodb-buffer-pool-size=32M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=" + (builder.fsync() ? 1 : 2),
                "--max-connections=" + builder.maxConnections()));
        for (String setting : builder.settings()) {
            command.add("--" + setting);
        }
        return command;
    }

    private static String mariadbd() {
        return Executables.require("mariadbd", "mariadb-server").toString();
    }

    /** @return a builder with the defaults: see {@link DatabaseServer.Options}; 300 connections */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a server with the defaults of {@link #builder()}.
     *
     * @return the running server
     * @throws ServerException if MariaDB is not installed, or does not accept a login in time
     */
    public static MariaDbServer start() {
        return builder().start();
    }

    /** @return its engine URI: {@code jdbc:mariadb://127.0.0.1:PORT/DATABASE?user=USER&password=PASSWORD} */
    @Override
    public String uri() {
        return "jdbc:mariadb://" + hostPort() + "/" + database() + "?user=" + user() + "&password=" + password();
    }

    @Override
    protected String loginCheckName() {
        return "mariadb-admin-" + port();
    }

    @Override
    protected List<String> loginCheck() {
        return List.of(
                Executables.require("mariadb-admin", "mariadb-client").toString(),
                "--no-defaults",
                "--protocol=tcp",
                "-h",
                "127.0.0.1",
                "-P",
                Integer.toString(port()),
                "-u",
                user(),
                "--connect-timeout=2",
                "status");
    }

    @Override
    protected Map<String, String> loginCheckEnvironment() {
        return Map.of("MYSQL_PWD", password());
    }

    /** Options of a {@link MariaDbServer}; {@link #setting} takes mariadbd options without their {@code --}. Not thread-safe. */
    public static final class Builder extends DatabaseServer.Options<Builder> {
        /**
         * The server's own temporary directory: with the system's {@code /tmp}, a server starting in one JVM
         * deletes the {@code #sql*} files of a set-up running in another.
         */
        private Path tmpDir;

        private Builder() {
            super("mysql", "mysql", 300);
        }

        /**
         * Creates the data directory's system tables, the login user and the database, starts the
         * server and waits until it accepts a login.
         *
         * @return the running server
         * @throws ServerException if MariaDB is not installed (naming the package), its set-up
         *     fails, or it ends before it serves (each with its output), or does not serve in time
         */
        public MariaDbServer start() {
            prepare();
            tmpDir = privateTempDir();
            String password = Passwords.random();
            MariaDbServer server = null;
            try {
                String runAs = SystemUsers.isRoot() ? systemUser() : System.getProperty("user.name");
                setUp(
                        "mariadb-install-db",
                        this,
                        List.of(
                                Executables.require("mariadb-install-db", "mariadb-server")
                                        .toString(),
                                "--no-defaults",
                                "--datadir=" + dataDir(),
                                "--user=" + runAs,
                                "--auth-root-authentication-method=socket",
                                "--skip-test-db",
                                "--tmpdir=" + tmpDir),
                        "");
                // bootstrap mode loads no grant tables until FLUSH PRIVILEGES; the password is a Base64 literal
                setUp(
                        "mariadbd --bootstrap",
                        this,
                        List.of(
                                mariadbd(),
                                "--no-defaults",
                                "--datadir=" + dataDir(),
                                "--tmpdir=" + tmpDir,
                                "--bootstrap",
                                "--skip-log-bin"),
                        "FLUSH PRIVILEGES;\nCREATE USER '" + user() + "'@'127.0.0.1' IDENTIFIED BY '" + password
                                + "';\n"
                                + "GRANT ALL PRIVILEGES ON *.* TO '" + user() + "'@'127.0.0.1' WITH GRANT OPTION;\n"
                                + "CREATE DATABASE IF NOT EXISTS `" + database() + "`;\n");
                server = new MariaDbServer(this, portOrFree(), password);
                server.startProcess();
                return server;
            } catch (RuntimeException e) {
                if (server != null) {
                    server.close();
                } else {
                    deleteCreatedDataDir();
                    Directories.deleteQuietly(tmpDir);
                }
                throw e;
            }
        }

        private Path privateTempDir() {
            Path dir;
            try {
                dir = Files.createTempDirectory("cerberus-mariadb-tmp-");
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            } catch (IOException e) {
                throw new ServerException("could not create a temporary directory for MariaDB: " + e, e);
            }
            SystemUsers.give(dir, systemUser());
            return dir;
        }
    }
}
