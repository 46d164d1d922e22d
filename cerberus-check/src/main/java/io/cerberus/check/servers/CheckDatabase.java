package io.cerberus.check.servers;

import io.cerberus.servers.Executables;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.LoopbackServer;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PgBouncerServer;
import io.cerberus.servers.PostgresServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code cerberus check --server postgres}, {@code mariadb} and {@code h2}: one {@link PostgresServer},
 * {@link MariaDbServer} or {@link H2Server} on a free loopback port with the server's default
 * durability (PostgreSQL fsync on; InnoDB {@code innodb_flush_log_at_trx_commit=1}, each commit
 * written and flushed; H2 a file database written up to its write delay, 500 ms, after a commit,
 * unless {@code --persistence commit} sets none), its output in {@code <dir>/postgres.out},
 * {@code mariadb.out} or {@code h2.out}. Its fault, {@code server-kill}, kills the server with
 * SIGKILL (the postmaster and its backends; {@code mariadbd}; H2's JVM), confirmed: all exited and
 * the port refusing; keeps it down {@code --server-down}, and starts it again on the same data
 * (crash recovery) until it serves. The clients use the jdbc: engine in lease-row or session mode
 * ({@code --jdbc-mode}) and get its URI (PostgreSQL's and MariaDB's with the password drawn at
 * start) in their environment, never on a command line. PostgreSQL may have a {@link PgBouncerServer}
 * in front ({@code --pgbouncer session} or {@code transaction}, its output in
 * {@code <dir>/pgbouncer.out}): the clients then connect through it, and {@code server-kill} kills
 * PostgreSQL behind it, confirmed restarted once a login through PgBouncer reaches it again.
 */
public final class CheckDatabase implements LockServer {
    /** The pool modes {@code --pgbouncer} takes. */
    public static final List<String> PGBOUNCER_MODES = List.of("session", "transaction");

    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final LoopbackServer server;
    private final String process;
    private final String mode;
    /** PgBouncer in front of the server, or null. */
    private final PgBouncerServer bouncer;

    private CheckDatabase(LoopbackServer server, String process, String mode, PgBouncerServer bouncer) {
        this.server = server;
        this.process = process;
        this.mode = mode;
        this.bouncer = bouncer;
    }

    /**
     * Creates the database cluster and starts PostgreSQL, and PgBouncer in front of it if asked.
     *
     * @param dir where the servers' output goes
     * @param mode the jdbc: engine's mode the clients use: {@code lease-row} or {@code session}
     * @param pgBouncer PgBouncer's pool mode, one of {@link #PGBOUNCER_MODES}, or null for none
     * @return the running server
     * @throws IllegalArgumentException if PostgreSQL, PgBouncer when asked for, or (as root) setpriv, is not installed
     */
    static CheckDatabase postgres(Path dir, String mode, String pgBouncer) throws IOException {
        requirePrograms("postgres", List.of("postgres", "initdb"), "postgresql", "postgres");
        if (pgBouncer != null && Executables.find("pgbouncer").isEmpty()) {
            throw new IllegalArgumentException(
                    "--pgbouncer needs pgbouncer; install it with: apt-get install pgbouncer");
        }
        Files.createDirectories(dir);
        // its data directory is a temporary one, not in --out: the postgres user must reach it, and --out may be a
        // root-only path
        PostgresServer postgres = PostgresServer.builder()
                .fsync(true)
                .output(dir.resolve("postgres.out"))
                .startTimeout(WITHIN)
                .start();
        if (pgBouncer == null) {
            return new CheckDatabase(postgres, "postmaster", mode, null);
        }
        try {
            // a login that failed while PostgreSQL was down is retried after 1 s, not PgBouncer's default 15 s
            PgBouncerServer bouncer = PgBouncerServer.builder(postgres)
                    .poolMode(PgBouncerServer.PoolMode.valueOf(pgBouncer.toUpperCase(Locale.ROOT)))
                    .setting("server_login_retry", "1")
                    .output(dir.resolve("pgbouncer.out"))
                    .start();
            return new CheckDatabase(postgres, "postmaster", mode, bouncer);
        } catch (RuntimeException e) {
            postgres.close();
            throw e;
        }
    }

    /**
     * Creates the system tables and starts MariaDB.
     *
     * @param dir where the server's output goes
     * @param mode the jdbc: engine's mode the clients use: {@code lease-row} or {@code session}
     * @return the running server
     * @throws IllegalArgumentException if MariaDB, or (as root) setpriv, is not installed
     */
    static CheckDatabase mariaDb(Path dir, String mode) throws IOException {
        requirePrograms("mariadb", List.of("mariadbd", "mariadb-install-db"), "mariadb-server", "mysql");
        if (Executables.find("mariadb-admin").isEmpty()) {
            throw new IllegalArgumentException(
                    "--server mariadb needs mariadb-admin to see the server accept a login; install it with:"
                            + " apt-get install mariadb-client");
        }
        Files.createDirectories(dir);
        // as for PostgreSQL, a temporary data directory that the mysql user can reach
        return new CheckDatabase(
                MariaDbServer.builder()
                        .fsync(true)
                        .output(dir.resolve("mariadb.out"))
                        .startTimeout(WITHIN)
                        .start(),
                "mariadbd",
                mode,
                null);
    }

    /**
     * Starts H2's TCP server from this command's own class path (it carries H2), its database a
     * file in {@code <dir>/h2}.
     *
     * @param dir where the server's database and output go
     * @param mode the jdbc: engine's mode the clients use: {@code lease-row} or {@code session}
     * @param writtenAtCommit whether each commit is written to the file before it is answered
     *     ({@code WRITE_DELAY=0} in the URI) rather than up to H2's write delay later
     * @return the running server
     */
    static CheckDatabase h2(Path dir, String mode, boolean writtenAtCommit) throws IOException {
        Files.createDirectories(dir);
        H2Server.Builder builder = H2Server.builder()
                .dir(dir.resolve("h2"))
                .output(dir.resolve("h2.out"))
                .startTimeout(WITHIN);
        if (writtenAtCommit) {
            builder.writeDelay(Duration.ZERO);
        }
        return new CheckDatabase(builder.start(), "H2's JVM", mode, null);
    }

    private static void requirePrograms(String kind, List<String> programs, String debianPackage, String systemUser) {
        for (String program : programs) {
            if (Executables.find(program).isEmpty()) {
                throw new IllegalArgumentException("--server " + kind + " needs " + program
                        + "; install it with: apt-get install " + debianPackage);
            }
        }
        if ("root".equals(System.getProperty("user.name"))
                && Executables.find("setpriv").isEmpty()) {
            throw new IllegalArgumentException("--server " + kind + " as root needs setpriv to run the server as the "
                    + systemUser + " user (it refuses root); install it with: apt-get install util-linux");
        }
    }

    /** @return the clients' URI: the server's, or PgBouncer's in front of it */
    @Override
    public String uri() {
        String separator =
                server instanceof H2Server ? ";" : "&"; // H2's settings follow ';', the others' a query string
        return (bouncer == null ? server.uri() : bouncer.uri())
                + (mode.equals("session") ? separator + "cerberus.mode=session" : "");
    }

    @Override
    public Optional<String> registerStore(String store) {
        return store.equals("sql") ? Optional.of(server.uri()) : Optional.empty();
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        long pid = server.pid();
        long children = ProcessHandle.of(pid)
                .map(process -> process.descendants().count())
                .orElse(0L);
        record.accept("server-kill");
        server.kill();
        Thread.sleep(down.toMillis()); // --server-down is how long it stays down: a duration, not a wait for an event
        long restarting = System.nanoTime();
        server.restart();
        record.accept("server-restart");
        long serving = System.nanoTime();
        if (bouncer != null) {
            bouncer.awaitLogin(WITHIN);
        }
        record.accept("confirmed server-kill: " + process + " pid " + pid
                + (children > 0 ? " and its " + children + " processes" : "") + " exited, port " + server.port()
                + " closed; " + (server instanceof H2Server ? "accepting connections" : "accepting logins") + " again "
                + TimeUnit.NANOSECONDS.toMillis(serving - restarting)
                + "ms after the restart"
                + (bouncer == null
                        ? ""
                        : ", through PgBouncer " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarting)
                                + "ms after"));
    }

    @Override
    public void close() {
        try {
            if (bouncer != null) {
                bouncer.close();
            }
        } finally {
            server.close();
        }
    }
}
