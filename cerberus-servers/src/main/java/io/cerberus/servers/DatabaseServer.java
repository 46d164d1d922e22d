package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A real SQL server ({@link PostgresServer}, {@link MariaDbServer}) on a loopback port with a data
 * directory of its own, set up by this JVM (never the system service): what both kinds share.
 * Over TCP one login user logs in with a password drawn at start ({@link Passwords}), handed out
 * in {@link #uri()} only; the administrators' logins take the unix socket, which lies in the data
 * directory that only the server's user may enter (mode 0700). As root, the set-up programs and
 * the server run as the server's system user ({@code setpriv}, util-linux), who owns the data
 * directory. It serves once that user logs in, not when its port opens. The data survive
 * {@link #kill()} and {@link #restart()} (crash recovery); a data directory created here is
 * deleted by {@link #close()}, one that was given is kept. Not thread-safe.
 */
public abstract class DatabaseServer extends LoopbackServer {
    private static final Duration SET_UP = Duration.ofSeconds(120);
    private static final Duration LOGIN = Duration.ofSeconds(5);

    private final Options<?> options;
    private final String password;

    /**
     * @param kind the server's program name, for messages
     * @param port its port
     * @param command the command that starts it, not yet wrapped for the system user
     * @param options the builder, whose {@link Options#prepare()} has run
     * @param password the login user's password
     */
    protected DatabaseServer(String kind, int port, List<String> command, Options<?> options, String password) {
        super(kind, port, SystemUsers.runAs(options.systemUser, command), options);
        this.options = options;
        this.password = password;
    }

    /** @return the login user of {@link #uri()} */
    public final String user() {
        return options.user;
    }

    /** @return the login user's password */
    public final String password() {
        return password;
    }

    /** @return the database of {@link #uri()} */
    public final String database() {
        return options.database;
    }

    /** @return the data directory */
    public final Path dataDir() {
        return options.dataDir;
    }

    @Override
    protected final String servesWhen() {
        return "accept a login of " + user();
    }

    @Override
    protected final boolean serves() {
        if (!FreePorts.accepts(port())) {
            return false;
        }
        try {
            ManagedProcess.run(loginCheckName(), loginCheck(), loginCheckEnvironment(), "", Timeouts.scaled(LOGIN));
            return true;
        } catch (ServerException refused) {
            return false;
        }
    }

    /** @return a short name of the login check, for messages */
    protected abstract String loginCheckName();

    /** @return the command of the kind's client that logs in over TCP and exits 0 only if it could */
    protected abstract List<String> loginCheck();

    /** @return the client's environment, where it finds the password (never on its command line) */
    protected abstract Map<String, String> loginCheckEnvironment();

    /** Kills the server and deletes the data directory if it was created here. */
    @Override
    public void close() {
        try {
            super.close();
        } finally {
            options.deleteCreatedDataDir();
        }
    }

    /**
     * Runs a set-up program of the kind ({@code initdb}) as the server's system user, to its end.
     *
     * @param name its name, for messages
     * @param options the builder
     * @param command the command
     * @param input its standard input
     * @throws ServerException if it fails, with its output
     */
    static void setUp(String name, Options<?> options, List<String> command, String input) {
        ManagedProcess.run(
                name, SystemUsers.runAs(options.systemUser, command), Map.of(), input, Timeouts.scaled(SET_UP));
    }

    /**
     * The options both kinds have; each has the default the tests want. Not thread-safe.
     *
     * @param <B> the kind's builder
     */
    public abstract static class Options<B extends Options<B>> extends LoopbackServer.Options<B> {
        private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
        private static final Pattern SETTING = Pattern.compile("[a-z][a-z0-9_.-]*");

        private Path dataDir;
        private boolean createdDataDir;
        private boolean fsync;
        private String systemUser;
        private String user = "cerberus";
        private String database;
        private int maxConnections;
        private final List<String> settings = new ArrayList<>();

        /**
         * @param systemUser the kind's system user
         * @param database the kind's database that is always there
         * @param maxConnections the default connection limit
         */
        protected Options(String systemUser, String database, int maxConnections) {
            this.systemUser = systemUser;
            this.database = database;
            this.maxConnections = maxConnections;
            startTimeout(Timeouts.scaled(Duration.ofSeconds(60))); // crash recovery after a kill may take a while
        }

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /**
         * @param dataDir the data directory: absent or empty, and (as root) reachable by the
         *     server's system user; by default a new temporary directory, deleted on close
         * @return this builder
         */
        public B dataDir(Path dataDir) {
            this.dataDir = dataDir;
            return self();
        }

        /**
         * @param fsync whether commits wait for the disk, the servers' own default; off by default
         *     here (PostgreSQL {@code -F}, MariaDB {@code innodb_flush_log_at_trx_commit=2}): a
         *     killed server loses nothing, only a machine crash would
         * @return this builder
         */
        public B fsync(boolean fsync) {
            this.fsync = fsync;
            return self();
        }

        /**
         * @param systemUser the system user the set-up and the server run as when this JVM is root;
         *     the kind's own ({@code postgres}, {@code mysql}) by default
         * @return this builder
         * @throws IllegalArgumentException if it is not a name
         */
        public B systemUser(String systemUser) {
            this.systemUser = name("system user", systemUser);
            return self();
        }

        /**
         * @param user the login user created for {@link #uri()}, with every privilege; {@code cerberus} by default
         * @return this builder
         * @throws IllegalArgumentException if it is not a name of letters, digits and _
         */
        public B user(String user) {
            this.user = name("user", user);
            return self();
        }

        /**
         * @param database the database of {@link #uri()}, created if the server has none of that
         *     name; by default one every server has ({@code postgres}, {@code mysql})
         * @return this builder
         * @throws IllegalArgumentException if it is not a name of letters, digits and _
         */
        public B database(String database) {
            this.database = name("database", database);
            return self();
        }

        /**
         * @param maxConnections the server's connection limit
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public B maxConnections(int maxConnections) {
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be at least 1, was " + maxConnections);
            }
            this.maxConnections = maxConnections;
            return self();
        }

        /**
         * @param name a server setting, e.g. {@code shared_buffers} or {@code innodb-buffer-pool-size}
         * @param value its value; settings come after the others, so they win
         * @return this builder
         * @throws IllegalArgumentException if the name is not lower-case letters, digits, _, - and .
         */
        public B setting(String name, String value) {
            if (name == null || !SETTING.matcher(name).matches()) {
                throw new IllegalArgumentException(
                        "a setting name must be lower-case letters, digits, _, - and ., was '" + name + "'");
            }
            settings.add(name + "=" + value);
            return self();
        }

        private static String name(String what, String name) {
            if (name == null || !NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("the " + what
                        + " must be 1 to 63 letters, digits and _, not starting with a digit, was '" + name + "'");
            }
            return name;
        }

        /** @return whether commits wait for the disk */
        protected final boolean fsync() {
            return fsync;
        }

        /** @return the login user */
        protected final String user() {
            return user;
        }

        /** @return the database */
        protected final String database() {
            return database;
        }

        /** @return the system user the server runs as when this JVM is root */
        protected final String systemUser() {
            return systemUser;
        }

        /** @return the connection limit */
        protected final int maxConnections() {
            return maxConnections;
        }

        /** @return the settings, each {@code name=value} */
        protected final List<String> settings() {
            return List.copyOf(settings);
        }

        /** @return the data directory; set once {@link #prepare()} has run */
        protected final Path dataDir() {
            return dataDir;
        }

        /**
         * Creates the data directory if none was given (or if the given one is absent), private to
         * the server's system user.
         *
         * @throws ServerException if it cannot be created or given to the system user
         */
        protected final void prepare() {
            try {
                if (dataDir == null) {
                    dataDir = Files.createTempDirectory("cerberus-" + systemUser + "-");
                    createdDataDir = true;
                } else if (Files.notExists(dataDir)) {
                    Files.createDirectories(dataDir);
                }
                Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx------"));
            } catch (IOException e) {
                throw new ServerException("could not create the data directory " + dataDir + ": " + e, e);
            }
            SystemUsers.give(dataDir, systemUser);
        }

        /** Deletes the data directory if {@link #prepare()} created it; what cannot be deleted is left to the system. */
        protected final void deleteCreatedDataDir() {
            if (createdDataDir) {
                Directories.deleteQuietly(dataDir);
            }
        }
    }
}
