package io.cerberus.servers;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A real H2 database server on a loopback port: a child JVM running H2's TCP server
 * ({@value #MAIN_CLASS}) from a class path that must hold it (by default this JVM's, which does
 * when the caller depends on {@code com.h2database:h2}; this module does not), bound to
 * 127.0.0.1 and refusing other hosts (H2's default). Its database {@value #DATABASE} is a file in
 * a directory of its own ({@code -baseDir}) by default; {@link Builder#inMemory()} keeps it in the
 * server's memory instead. Closed to other local users as PostgreSQL and MariaDB are: the child
 * creates the database before it listens, its administrator {@value #USER} with a new random
 * password ({@link Passwords#random()}), and serves with {@code -ifExists}, so no client creates a
 * database, and a random {@code -tcpPassword}, so none shuts the server down; the passwords reach
 * the child in its environment ({@link H2Launcher}), never on its command line. A directory holding
 * the database of an earlier start cannot be used again (its password is gone). What
 * survives {@link #kill()} and {@link #restart()} is what H2 had written to the file: H2 writes a
 * commit up to its {@code WRITE_DELAY} later (500 ms unless {@link Builder#writeDelay} puts
 * another in {@link #uri()}); an in-memory database is lost. It serves once its port accepts
 * connections. A directory it made is deleted on close. Not thread-safe: one test or one fault
 * loop drives it.
 */
public final class H2Server extends LoopbackServer {
    /** The class H2's servers start with. */
    public static final String MAIN_CLASS = "org.h2.tools.Server";
    /** The name of its database, in {@link #uri()}. */
    public static final String DATABASE = "cerberus";
    /** The user that created its database, and so is its administrator. */
    public static final String USER = "cerberus";

    private final Path dir;
    private final boolean temporaryDir;
    private final boolean inMemory;
    private final Duration writeDelay;
    private final String password;
    private final String tcpPassword;

    private H2Server(int port, List<String> command, Builder options, Path dir, boolean temporaryDir, String password) {
        super("h2", port, command, options);
        this.dir = dir;
        this.temporaryDir = temporaryDir;
        this.inMemory = options.inMemory;
        this.writeDelay = options.writeDelay;
        this.password = password;
        this.tcpPassword = Passwords.random();
    }

    @Override
    protected Map<String, String> environment() {
        return Map.of(H2Launcher.PASSWORD_ENV, password, H2Launcher.TCP_PASSWORD_ENV, tcpPassword);
    }

    /** @return a builder with the defaults: a free port, a file database in a temporary directory, H2's write delay */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a server with the defaults of {@link #builder()}.
     *
     * @return the running server
     * @throws ServerException if H2 is not on this JVM's class path, or does not serve in time
     */
    public static H2Server start() {
        return builder().start();
    }

    @Override
    protected String servesWhen() {
        return "accept connections";
    }

    @Override
    protected boolean serves() {
        return FreePorts.accepts(port());
    }

    /**
     * @return its engine URI (and JDBC URL), {@code jdbc:h2:tcp://127.0.0.1:PORT/cerberus;USER=cerberus;PASSWORD=P},
     *     or {@code .../mem:cerberus;DB_CLOSE_DELAY=-1;USER=...} in memory (the database lives as long as
     *     the server), with {@code ;WRITE_DELAY=MS} if one was set
     */
    @Override
    public String uri() {
        return url() + ";USER=" + USER + ";PASSWORD=" + password
                + (writeDelay == null ? "" : ";WRITE_DELAY=" + writeDelay.toMillis());
    }

    /** @return its JDBC URL without the user and password (nor a write delay), for a client given them apart */
    public String url() {
        return "jdbc:h2:tcp://" + hostPort() + "/" + (inMemory ? "mem:" + DATABASE + ";DB_CLOSE_DELAY=-1" : DATABASE);
    }

    /** @return the password of {@link #USER}, new at every start of a builder, kept across {@link #restart()} */
    public String password() {
        return password;
    }

    /** @return the directory its database files are in (H2's {@code -baseDir}) */
    public Path dir() {
        return dir;
    }

    /** @return whether its database lives in the server's memory, lost when it ends */
    public boolean inMemory() {
        return inMemory;
    }

    /** Kills the server (continuing it first if paused), and deletes its directory if it made it. */
    @Override
    public void close() {
        super.close();
        if (temporaryDir) {
            Directories.deleteQuietly(dir);
        }
    }

    /** Options of an {@link H2Server}; each has the default the tests want. Not thread-safe. */
    public static final class Builder extends LoopbackServer.Options<Builder> {
        private String classPath; // null for this JVM's
        private List<String> jvmOptions = List.of("-Xmx256m", "-XX:+UseSerialGC", "-Xshare:auto");
        private Path dir;
        private boolean inMemory;
        private Duration writeDelay;

        private Builder() {
            startTimeout(Timeouts.scaled(Duration.ofSeconds(30)));
        }

        /**
         * @param dir where its database files go, kept after close; by default a temporary
         *     directory deleted on close
         * @return this builder
         */
        public Builder dir(Path dir) {
            this.dir = dir;
            return this;
        }

        /** @return this builder, with the database in the server's memory: fast, and lost when the server ends */
        public Builder inMemory() {
            this.inMemory = true;
            return this;
        }

        /**
         * @param writeDelay how long H2 may wait after a commit before writing it to the file
         *     (its {@code WRITE_DELAY}, set by every login of {@link #uri()}); 0 writes each
         *     commit before answering it, so a killed server keeps what it confirmed. By default
         *     the URI sets none and H2's own (500 ms) applies
         * @return this builder
         * @throws IllegalArgumentException if it is negative
         */
        public Builder writeDelay(Duration writeDelay) {
            if (writeDelay == null || writeDelay.isNegative()) {
                throw new IllegalArgumentException("writeDelay must be 0 or more, was " + writeDelay);
            }
            this.writeDelay = writeDelay;
            return this;
        }

        /**
         * @param classPath the class path that holds H2; this JVM's by default
         * @return this builder
         * @throws IllegalArgumentException if it is empty
         */
        public Builder classPath(String classPath) {
            this.classPath = JavaCommand.checkedClassPath(classPath);
            return this;
        }

        /**
         * @param options the child JVM's options, instead of the default {@code -Xmx256m
         *     -XX:+UseSerialGC -Xshare:auto}
         * @return this builder
         */
        public Builder jvmOptions(String... options) {
            this.jvmOptions = List.of(options);
            return this;
        }

        /**
         * Starts the server and waits until it serves.
         *
         * @return the running server
         * @throws ServerException if H2's main class is not on the class path, or the server ends
         *     before it serves (with its output), or does not serve in time
         */
        public H2Server start() {
            int port = portOrFree();
            Path home = dir == null ? Directories.createTemp(null, "cerberus-h2-") : Directories.create(dir);
            try {
                JavaCommand h2 = JavaCommand.of(MAIN_CLASS);
                if (classPath != null) {
                    h2.classPath(classPath);
                }
                h2.requireMainClass("depend on com.h2database:h2, or give its jar with classPath(...)");
                JavaCommand java = JavaCommand.of(H2Launcher.class);
                if (classPath != null) {
                    java.classPath(classPath
                            + File.pathSeparator
                            + Path.of(H2Launcher.class
                                    .getProtectionDomain()
                                    .getCodeSource()
                                    .getLocation()
                                    .toURI()));
                }
                List<String> command = java.jvmOptions(jvmOptions.toArray(String[]::new))
                        .jvmOptions("-Dh2.bindAddress=127.0.0.1")
                        .args(inMemory ? "mem" : "file", home.toString(), USER)
                        .args("-tcp", "-tcpPort", Integer.toString(port), "-baseDir", home.toString())
                        .toList();
                H2Server server = new H2Server(port, command, this, home, dir == null, Passwords.random());
                server.startProcess();
                return server;
            } catch (java.net.URISyntaxException e) {
                throw new ServerException(
                        "could not find where " + H2Launcher.class.getName() + " is loaded from: " + e, e);
            } catch (RuntimeException e) {
                if (dir == null) {
                    Directories.deleteQuietly(home);
                }
                throw e;
            }
        }
    }
}
