package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A real PgBouncer on a loopback port in front of a {@link PostgresServer} started by this JVM:
 * every database name a client asks for leads to the same database of that server, in the pool
 * mode asked for ({@link PoolMode}). Its settings ({@code pgbouncer.ini}) and its user list (the
 * PostgreSQL login user and password, which PgBouncer also logs in to the server with) are written
 * to a temporary directory that only the system user it runs as may enter; clients log in with
 * scram-sha-256, as they do to the server, and the login user may read the admin console
 * ({@code stats_users}, see {@link #show}). As root it runs as the {@code postgres} system user
 * ({@code setpriv}; PgBouncer refuses root). It listens on 127.0.0.1 only, no unix socket, and
 * serves once a login through it reaches the server. It keeps nothing: {@link #kill()} drops every
 * client and server connection, {@link #restart()} starts it again empty on the same port. Its
 * directory is deleted on close; the server behind it is the caller's. Not thread-safe.
 */
public final class PgBouncerServer extends LoopbackServer {
    private static final Duration ANSWER = Duration.ofSeconds(5);

    /** How PgBouncer lends its server connections to clients ({@code pool_mode}). */
    public enum PoolMode {
        /** A client keeps one server connection until it disconnects: its database session is its own (PgBouncer's default). */
        SESSION,
        /** A client has a server connection for one transaction at a time: its next transaction may run in another session. */
        TRANSACTION,
        /** A server connection for one statement at a time; transactions of several statements are refused. */
        STATEMENT;

        /** @return its {@code pool_mode} value */
        public String setting() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final PostgresServer backend;
    private final PoolMode poolMode;
    private final Path dir;

    private PgBouncerServer(Builder builder, int port, List<String> command, Path dir) {
        super("pgbouncer", port, command, builder);
        this.backend = builder.backend;
        this.poolMode = builder.poolMode;
        this.dir = dir;
    }

    /**
     * @param backend the running PostgreSQL to pool connections to
     * @return a builder with the defaults: session pooling, 100 server connections per database and user, 1000 clients
     */
    public static Builder builder(PostgresServer backend) {
        return new Builder(backend);
    }

    /**
     * Starts a PgBouncer with the defaults of {@link #builder}: session pooling.
     *
     * @param backend the running PostgreSQL to pool connections to
     * @return the running PgBouncer
     * @throws ServerException if PgBouncer is not installed, or does not serve in time
     */
    public static PgBouncerServer start(PostgresServer backend) {
        return builder(backend).start();
    }

    /**
     * @return its engine URI: the server's {@link PostgresServer#uri()} with PgBouncer's port,
     *     {@code jdbc:postgresql://127.0.0.1:PORT/DATABASE?user=USER&password=PASSWORD}
     */
    @Override
    public String uri() {
        return "jdbc:postgresql://" + hostPort() + "/" + backend.database() + "?user=" + backend.user() + "&password="
                + backend.password();
    }

    /** @return the PostgreSQL it pools connections to */
    public PostgresServer backend() {
        return backend;
    }

    /** @return its pool mode */
    public PoolMode poolMode() {
        return poolMode;
    }

    /** @return the directory of its settings and user list */
    public Path dir() {
        return dir;
    }

    /**
     * Asks PgBouncer's admin console, as the login user.
     *
     * @param what what to show: {@code CONFIG}, {@code POOLS}, {@code CLIENTS}, ...
     * @return the rows of {@code SHOW what}, each its columns joined by {@code |}
     * @throws IllegalArgumentException if {@code what} is not a word
     * @throws ServerException if PgBouncer does not answer within 5 s (scaled)
     */
    public List<String> show(String what) {
        if (what == null || !what.matches("[A-Za-z_]+")) {
            throw new IllegalArgumentException("SHOW takes one word, such as POOLS, was '" + what + "'");
        }
        String rows = ManagedProcess.run(
                "pgbouncer-console-" + port(),
                backend.psql(port(), "pgbouncer", "SHOW " + what),
                backend.loginCheckEnvironment(),
                "",
                Timeouts.scaled(ANSWER));
        return rows.lines().filter(line -> !line.isEmpty()).toList();
    }

    /**
     * Waits until a login through PgBouncer reaches the server again: after the server behind it
     * was killed and restarted, PgBouncer logs in to it anew (no sooner than its
     * {@code server_login_retry} after a failed login).
     *
     * @param within how long to wait
     * @throws ServerException if no login gets through in time
     */
    public void awaitLogin(Duration within) {
        Await.until(this + " to " + servesWhen(), within, this::serves);
    }

    @Override
    protected String servesWhen() {
        return "let " + backend.user() + " log in to " + backend;
    }

    @Override
    protected boolean serves() {
        if (!FreePorts.accepts(port())) {
            return false;
        }
        try {
            ManagedProcess.run(
                    "psql-via-pgbouncer-" + port(),
                    backend.psql(port(), backend.database(), "SELECT 1"),
                    backend.loginCheckEnvironment(),
                    "",
                    Timeouts.scaled(ANSWER));
            return true;
        } catch (ServerException refused) {
            return false;
        }
    }

    /** Kills PgBouncer and deletes its directory. */
    @Override
    public void close() {
        try {
            super.close();
        } finally {
            Directories.deleteQuietly(dir);
        }
    }

    @Override
    public String toString() {
        return "pgbouncer (pool_mode=" + poolMode.setting() + ") on " + hostPort() + " in front of " + backend;
    }

    /** Options of a {@link PgBouncerServer}; each has the default the tests want. Not thread-safe. */
    public static final class Builder extends LoopbackServer.Options<Builder> {
        private static final Pattern SETTING = Pattern.compile("[a-z][a-z0-9_]*");

        private final PostgresServer backend;
        private PoolMode poolMode = PoolMode.SESSION;
        private int poolSize = 100;
        private int maxClients = 1000;
        private String systemUser = "postgres";
        private final List<String> settings = new ArrayList<>();

        private Builder(PostgresServer backend) {
            if (backend == null) {
                throw new IllegalArgumentException(
                        "PgBouncer needs the PostgreSQL server to pool connections to, was null");
            }
            this.backend = backend;
        }

        /**
         * @param poolMode how server connections are lent to clients; {@link PoolMode#SESSION} by default
         * @return this builder
         * @throws IllegalArgumentException if it is null
         */
        public Builder poolMode(PoolMode poolMode) {
            if (poolMode == null) {
                throw new IllegalArgumentException(
                        "the pool mode must be one of " + Arrays.toString(PoolMode.values()) + ", was null");
            }
            this.poolMode = poolMode;
            return this;
        }

        /**
         * @param poolSize the most server connections per database and user ({@code default_pool_size}); 100 by
         *     default: in session pooling every client connection holds one
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder poolSize(int poolSize) {
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize must be at least 1, was " + poolSize);
            }
            this.poolSize = poolSize;
            return this;
        }

        /**
         * @param maxClients the most client connections ({@code max_client_conn}); 1000 by default
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder maxClients(int maxClients) {
            if (maxClients < 1) {
                throw new IllegalArgumentException("maxClients must be at least 1, was " + maxClients);
            }
            this.maxClients = maxClients;
            return this;
        }

        /**
         * @param systemUser the system user PgBouncer runs as when this JVM is root; {@code postgres} by default
         *     (the Debian package's)
         * @return this builder
         */
        public Builder systemUser(String systemUser) {
            if (systemUser == null || !systemUser.matches("[a-z_][a-z0-9_-]*")) {
                throw new IllegalArgumentException(
                        "a system user is a name of lower-case letters, digits, _ and -, was '" + systemUser + "'");
            }
            this.systemUser = systemUser;
            return this;
        }

        /**
         * @param name a setting of the {@code [pgbouncer]} section, e.g. {@code server_login_retry}
         * @param value its value; settings come after the others, so they win
         * @return this builder
         * @throws IllegalArgumentException if the name is not lower-case letters, digits and _, or
         *     the value spans lines
         */
        public Builder setting(String name, String value) {
            if (name == null || !SETTING.matcher(name).matches()) {
                throw new IllegalArgumentException(
                        "a setting name must be lower-case letters, digits and _, was '" + name + "'");
            }
            if (value == null || value.contains("\n") || value.contains("\r")) {
                throw new IllegalArgumentException("the value of " + name + " must be one line, was '" + value + "'");
            }
            settings.add(name + " = " + value);
            return this;
        }

        /**
         * Writes the settings and user list and starts PgBouncer, and waits until a login through it
         * reaches the server.
         *
         * @return the running PgBouncer
         * @throws ServerException if PgBouncer is not installed (naming the package), (as root) its
         *     system user is missing, or it ends before it serves (with its output), or does not serve in time
         */
        public PgBouncerServer start() {
            Path program = Executables.require("pgbouncer", "pgbouncer");
            int port = portOrFree();
            Path dir = Directories.createTemp(null, "cerberus-pgbouncer-");
            try {
                Path ini = dir.resolve("pgbouncer.ini");
                writePrivate(
                        dir.resolve("userlist.txt"), "\"" + backend.user() + "\" \"" + backend.password() + "\"\n");
                writePrivate(ini, ini(port, dir.resolve("userlist.txt")));
                SystemUsers.give(dir, systemUser);
                PgBouncerServer server = new PgBouncerServer(
                        this, port, SystemUsers.runAs(systemUser, List.of(program.toString(), ini.toString())), dir);
                server.startProcess();
                return server;
            } catch (RuntimeException e) {
                Directories.deleteQuietly(dir);
                throw e;
            }
        }

        private String ini(int port, Path userList) {
            StringBuilder ini = new StringBuilder();
            ini.append("; written by cerberus-servers: every database of ")
                    .append(backend)
                    .append('\n');
            ini.append("[databases]\n* = host=127.0.0.1 port=")
                    .append(backend.port())
                    .append("\n\n");
            ini.append("[pgbouncer]\n");
            ini.append("listen_addr = 127.0.0.1\nlisten_port = ").append(port).append('\n');
            ini.append("unix_socket_dir =\n");
            ini.append("auth_type = scram-sha-256\nauth_file = ")
                    .append(userList)
                    .append('\n');
            ini.append("stats_users = ").append(backend.user()).append('\n');
            ini.append("pool_mode = ").append(poolMode.setting()).append('\n');
            ini.append("default_pool_size = ").append(poolSize).append('\n');
            ini.append("max_client_conn = ").append(maxClients).append('\n');
            for (String setting : settings) {
                ini.append(setting).append('\n');
            }
            return ini.toString();
        }

        /** Writes a file only its owner may read, given to the system user PgBouncer runs as. */
        private void writePrivate(Path file, String text) {
            Directories.write(file, text);
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            } catch (IOException e) {
                throw new ServerException("could not make " + file + " private: " + e, e);
            }
            SystemUsers.give(file, systemUser);
        }
    }
}
