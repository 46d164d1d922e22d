package io.cerberus.servers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real H2 database server on a loopback port: a child JVM running H2's TCP server
 * ({@value #MAIN_CLASS}) from a class path that must hold it (by default this JVM's, which does
 * when the caller depends on {@code com.h2database:h2}; this module does not), bound to
 * 127.0.0.1 and refusing other hosts (H2's default). Its database {@value #DATABASE} is a file in
 * a directory of its own ({@code -baseDir}) by default, created by the first login
 * ({@code -ifNotExists}); {@link Builder#inMemory()} keeps it in the server's memory instead. What
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

    private final Path dir;
    private final boolean temporaryDir;
    private final boolean inMemory;
    private final Duration writeDelay;

    private H2Server(int port, List<String> command, Builder options, Path dir, boolean temporaryDir) {
        super("h2", port, command, options);
        this.dir = dir;
        this.temporaryDir = temporaryDir;
        this.inMemory = options.inMemory;
        this.writeDelay = options.writeDelay;
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
     * @return its engine URI (and JDBC URL), {@code jdbc:h2:tcp://127.0.0.1:PORT/cerberus}, or
     *     {@code .../mem:cerberus;DB_CLOSE_DELAY=-1} in memory (the database lives as long as the
     *     server), with {@code ;WRITE_DELAY=MS} if one was set; no user or password (H2's empty
     *     user, who created the database, is its administrator)
     */
    @Override
    public String uri() {
        String database = inMemory ? "mem:" + DATABASE + ";DB_CLOSE_DELAY=-1" : DATABASE;
        return "jdbc:h2:tcp://" + hostPort() + "/" + database + (writeDelay == null ? "" : ";WRITE_DELAY=" + writeDelay.toMillis());
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
                JavaCommand java = JavaCommand.of(MAIN_CLASS);
                if (classPath != null) {
                    java.classPath(classPath);
                }
                List<String> command = java.jvmOptions(jvmOptions.toArray(String[]::new)).jvmOptions("-Dh2.bindAddress=127.0.0.1")
                        .args("-tcp", "-tcpPort", Integer.toString(port), "-ifNotExists", "-baseDir", home.toString())
                        .requireMainClass("depend on com.h2database:h2, or give its jar with classPath(...)").toList();
                H2Server server = new H2Server(port, command, this, home, dir == null);
                server.startProcess();
                return server;
            } catch (RuntimeException e) {
                if (dir == null) {
                    Directories.deleteQuietly(home);
                }
                throw e;
            }
        }
    }
}
