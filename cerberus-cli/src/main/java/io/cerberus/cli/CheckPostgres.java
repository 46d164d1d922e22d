package io.cerberus.cli;

import io.cerberus.servers.Executables;
import io.cerberus.servers.PostgresServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code cerberus check --server postgres}: one {@link PostgresServer} on a free loopback port
 * with the server's default durability (fsync on), its output in {@code <dir>/postgres.out}. Its
 * fault, {@code server-kill}, kills the postmaster and its backends with SIGKILL (confirmed: all
 * exited, port refusing), keeps it down {@code --server-down}, and starts it again on the same
 * data directory (crash recovery) until it accepts a login. The clients get its URI, with the
 * password drawn at start, in their environment, never on a command line.
 */
final class CheckPostgres implements LockServer {
    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final PostgresServer server;
    private final String mode;

    private CheckPostgres(PostgresServer server, String mode) {
        this.server = server;
        this.mode = mode;
    }

    /**
     * Creates the database cluster and starts the server.
     *
     * @param dir where the server's output goes
     * @param mode the jdbc: engine's mode the clients use: {@code lease-row} or {@code session}
     * @return the running server
     * @throws IllegalArgumentException if PostgreSQL, or (as root) setpriv, is not installed
     */
    static CheckPostgres start(Path dir, String mode) throws IOException {
        for (String program : List.of("postgres", "initdb")) {
            if (Executables.find(program).isEmpty()) {
                throw new IllegalArgumentException("--server postgres needs " + program + "; install it with: apt-get install postgresql");
            }
        }
        if ("root".equals(System.getProperty("user.name")) && Executables.find("setpriv").isEmpty()) {
            throw new IllegalArgumentException("--server postgres as root needs setpriv to run PostgreSQL as the postgres user (it"
                    + " refuses root); install it with: apt-get install util-linux");
        }
        Files.createDirectories(dir);
        // its data directory is a temporary one, not in --out: the postgres user must reach it, and --out may be a root-only path
        return new CheckPostgres(PostgresServer.builder().fsync(true).output(dir.resolve("postgres.out")).startTimeout(WITHIN).start(),
                mode);
    }

    @Override
    public String uri() {
        return server.uri() + (mode.equals("session") ? "&cerberus.mode=session" : "");
    }

    @Override
    public void inject(String fault, Duration down, Consumer<String> record) throws InterruptedException {
        long pid = server.pid();
        long backends = ProcessHandle.of(pid).map(postmaster -> postmaster.descendants().count()).orElse(0L);
        record.accept("server-kill");
        server.kill();
        Thread.sleep(down.toMillis()); // --server-down is how long it stays down: a duration, not a wait for an event
        long restarting = System.nanoTime();
        server.restart();
        record.accept("server-restart");
        record.accept("confirmed server-kill: postmaster pid " + pid + " and its " + backends + " processes exited, port " + server.port()
                + " closed; accepting logins again " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarting)
                + "ms after the restart");
    }

    @Override
    public void close() {
        server.close();
    }
}
