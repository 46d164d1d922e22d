package io.cerberus.cli;

import io.cerberus.servers.Executables;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.Passwords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * {@code cerberus check --server postgres}: a PostgreSQL of its own — {@code initdb} into a new
 * temporary directory and {@code postgres} on a free loopback port, with the server's default
 * durability (fsync on) — run as the {@code postgres} user when the checker runs as root, since
 * PostgreSQL refuses root. Its fault, {@code server-kill}, kills the postmaster with SIGKILL, waits
 * until it, its port and its backends are gone, and after {@code --server-down} starts it again on
 * the same data directory (crash recovery) until it accepts a login.
 *
 * <p>Not open to the other users of the machine: over TCP the one user {@code cerberus} logs in
 * with scram-sha-256 and a password drawn at start (in {@link #uri()}, which the clients get in
 * their environment, never on a command line); the unix socket lies in the data directory, which
 * only the server's user may enter, and takes peer authentication.
 */
final class PostgresServer implements LockServer {
    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final Path output;
    private final Path dataDir;
    private final int port;
    private final String mode;
    private final String password = Passwords.random();
    private Process process;

    private PostgresServer(Path output, Path dataDir, int port, String mode) {
        this.output = output;
        this.dataDir = dataDir;
        this.port = port;
        this.mode = mode;
    }

    /**
     * Creates the database cluster and starts the server.
     *
     * @param dir where the server's output goes
     * @param mode the jdbc: engine's mode the clients use: {@code lease-row} or {@code session}
     * @return the running server
     * @throws IllegalArgumentException if PostgreSQL is not installed
     */
    static PostgresServer start(Path dir, String mode) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        // not in --out: the postgres user must be able to reach its data directory, and --out may be a root-only path
        Path dataDir = Files.createTempDirectory("cerberus-check-postgres-");
        PostgresServer server = new PostgresServer(dir.resolve("postgres.out"), dataDir, FreePorts.next(), mode);
        try {
            if (isRoot()) {
                UserPrincipalLookupService users = dataDir.getFileSystem().getUserPrincipalLookupService();
                PosixFileAttributeView view = Files.getFileAttributeView(dataDir, PosixFileAttributeView.class);
                view.setOwner(users.lookupPrincipalByName("postgres"));
                view.setGroup(users.lookupPrincipalByGroupName("postgres"));
            }
            Path passwordFile = Passwords.ownerOnlyFile(server.password, "postgres");
            try {
                Process initdb = new ProcessBuilder(asPostgres(List.of(program("initdb"), "-D", dataDir.toString(), "-U", "cerberus",
                        "--pwfile=" + passwordFile, "--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8", "--no-instructions")))
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(server.output.toFile())).redirectErrorStream(true).start();
                if (!initdb.waitFor(120, TimeUnit.SECONDS) || initdb.exitValue() != 0) {
                    throw new IllegalStateException("initdb failed; see " + server.output);
                }
            } finally {
                Files.deleteIfExists(passwordFile);
            }
            server.startPostmaster();
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    @Override
    public String uri() {
        return url() + (mode.equals("session") ? "&cerberus.mode=session" : "");
    }

    private String url() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=cerberus&password=" + password;
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws IOException, InterruptedException {
        long pid = process.pid();
        List<ProcessHandle> backends = process.descendants().toList();
        record.accept("server-kill");
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("postgres (pid " + pid + ") did not die of SIGKILL");
        }
        // the backends notice their postmaster's death and leave; until they have, a new postmaster refuses the data directory
        await("postgres port " + port + " to close and its " + backends.size() + " processes to end",
                () -> !FreePorts.accepts(port) && backends.stream().noneMatch(ProcessHandle::isAlive));
        Thread.sleep(down.toMillis()); // --server-down is how long it stays down: a duration, not a wait for an event
        long restarting = System.nanoTime();
        startPostmaster();
        record.accept("server-restart");
        record.accept("confirmed server-kill: postmaster pid " + pid + " exited, port closed, its " + backends.size()
                + " processes ended; accepting logins again " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarting)
                + "ms after the restart");
    }

    private void startPostmaster() throws IOException, InterruptedException {
        process = new ProcessBuilder(asPostgres(List.of(program("postgres"), "-D", dataDir.toString(), "-p", Integer.toString(port),
                "-h", "127.0.0.1", "-k", dataDir.toString(), "-c", "max_connections=200")))
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile())).redirectErrorStream(true).start();
        await("postgres on port " + port + " to accept a login", () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("postgres exited at start; see " + output);
            }
            try (Connection connection = DriverManager.getConnection(url() + "&connectTimeout=2")) {
                return connection.isValid(2);
            } catch (SQLException e) {
                return false;
            }
        });
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WITHIN.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after " + WITHIN.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    private static String program(String name) {
        return Executables.find(name).orElseThrow(() -> new IllegalArgumentException("--server postgres needs " + name
                + "; install it with: apt-get install postgresql")).toString();
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** PostgreSQL refuses to run as root: as root, run it as the postgres user. */
    private static List<String> asPostgres(List<String> command) {
        if (!isRoot()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of(program("setpriv"), "--reuid=postgres", "--regid=postgres", "--init-groups", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    @Override
    public void close() {
        if (process != null) {
            process.destroy(); // SIGTERM: the clients are gone by now, so the server stops at once
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> files = Files.walk(dataDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: left for the system to clear
        }
    }
}
