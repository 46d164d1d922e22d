package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A real PostgreSQL on a loopback port (see {@link DatabaseServer} for what every SQL server here
 * shares): {@code initdb} into the data directory with the login user as superuser, scram-sha-256
 * over TCP and peer authentication on the unix socket; then {@code postgres -h 127.0.0.1 -k DATADIR}.
 * A database other than {@code postgres} is created before the server first listens (in
 * single-user mode). It serves once {@code psql} logs in. {@link #kill()} ends the postmaster and
 * its backends, which would otherwise hold its port and shared memory and make the next start
 * fail; {@link #restart()} recovers from the crash. Not thread-safe.
 */
public final class PostgresServer extends DatabaseServer {
    private final Path bin;

    private PostgresServer(Builder builder, int port, Path bin, String password) {
        super("postgres", port, command(builder, port, bin), builder, password);
        this.bin = bin;
    }

    private static List<String> command(Builder builder, int port, Path bin) {
        List<String> command = new ArrayList<>(List.of(
                bin.resolve("postgres").toString(),
                "-D",
                builder.dataDir().toString(),
                "-p",
                Integer.toString(port),
                "-h",
                "127.0.0.1",
                "-k",
                builder.dataDir().toString(),
                "-c",
                "max_connections=" + builder.maxConnections(),
                "-c",
                "shared_buffers=32MB"));
        if (!builder.fsync()) {
            command.add("-F");
        }
        for (String setting : builder.settings()) {
            command.addAll(List.of("-c", setting));
        }
        return command;
    }

    /** @return a builder with the defaults: see {@link DatabaseServer.Options}; 200 connections */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a server with the defaults of {@link #builder()}.
     *
     * @return the running server
     * @throws ServerException if PostgreSQL is not installed, or does not accept a login in time
     */
    public static PostgresServer start() {
        return builder().start();
    }

    /** @return its engine URI: {@code jdbc:postgresql://127.0.0.1:PORT/DATABASE?user=USER&password=PASSWORD} */
    @Override
    public String uri() {
        return "jdbc:postgresql://" + hostPort() + "/" + database() + "?user=" + user() + "&password=" + password();
    }

    @Override
    protected String loginCheckName() {
        return "psql-" + port();
    }

    @Override
    protected List<String> loginCheck() {
        return psql(port(), database(), "SELECT 1");
    }

    /**
     * @param port a loopback port that leads to this server: its own, or a pooler's in front of it
     * @param database the database to log in to
     * @param sql what to run
     * @return the {@code psql} command that logs in there as the login user (its password in
     *     {@link #loginCheckEnvironment()}), runs {@code sql}, prints the rows' columns separated by
     *     {@code |} without headers, and exits 0 only if all of that worked
     */
    List<String> psql(int port, String database, String sql) {
        return List.of(
                bin.resolve("psql").toString(),
                "-X",
                "-q",
                "-w",
                "-A",
                "-t",
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-U",
                user(),
                "-d",
                database,
                "-c",
                sql);
    }

    @Override
    protected Map<String, String> loginCheckEnvironment() {
        return Map.of("PGPASSWORD", password(), "PGCONNECT_TIMEOUT", "2");
    }

    /** Options of a {@link PostgresServer}. Not thread-safe. */
    public static final class Builder extends DatabaseServer.Options<Builder> {
        private Builder() {
            super("postgres", "postgres", 200);
        }

        /**
         * Creates the database cluster, starts the server and waits until it accepts a login.
         *
         * @return the running server
         * @throws ServerException if PostgreSQL is not installed (naming the package), its set-up
         *     fails, or it ends before it serves (each with its output), or does not serve in time
         */
        public PostgresServer start() {
            Path bin;
            try {
                bin = Executables.require("postgres", "postgresql").toRealPath().getParent();
            } catch (IOException e) {
                throw new ServerException("could not resolve the postgres program: " + e, e);
            }
            prepare();
            String password = Passwords.random();
            PostgresServer server = null;
            try {
                initdb(bin, password);
                server = new PostgresServer(this, portOrFree(), bin, password);
                server.startProcess();
                return server;
            } catch (RuntimeException e) {
                if (server != null) {
                    server.close();
                } else {
                    deleteCreatedDataDir();
                }
                throw e;
            }
        }

        private void initdb(Path bin, String password) {
            Path passwordFile = Passwords.ownerOnlyFile(password, systemUser());
            try {
                List<String> initdb = new ArrayList<>(List.of(
                        bin.resolve("initdb").toString(),
                        "-D",
                        dataDir().toString(),
                        "-U",
                        user(),
                        "--pwfile=" + passwordFile,
                        "--auth-host=scram-sha-256",
                        "--auth-local=peer",
                        "-E",
                        "UTF8",
                        "--no-instructions"));
                if (!fsync()) {
                    initdb.add("--no-sync");
                }
                setUp("initdb", this, initdb, "");
            } finally {
                passwordFile.toFile().delete();
            }
            if (!database().equals("postgres")) {
                setUp(
                        "postgres --single",
                        this,
                        List.of(
                                bin.resolve("postgres").toString(),
                                "--single",
                                "-D",
                                dataDir().toString(),
                                "-F",
                                "postgres"),
                        "CREATE DATABASE \"" + database() + "\"\n");
            }
        }
    }
}
