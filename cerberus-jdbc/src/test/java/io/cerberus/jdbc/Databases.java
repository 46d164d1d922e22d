package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PgBouncerServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.ServerExtension;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The database servers the test classes of this module share: one of each kind per test run,
 * started by the first class that declares it and stopped by JUnit when the run ends. A class
 * declares each one it uses,
 * {@code @RegisterExtension static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();},
 * and its nested classes inherit it. A test that kills or restarts a server starts its own.
 */
final class Databases {
    /** The expected capabilities of a lease-row engine (the default mode). */
    static final Set<Capability> LEASE_ROW_CAPABILITIES =
            Collections.unmodifiableSet(EnumSet.of(Capability.FENCING, Capability.MULTI_PROCESS, Capability.INSPECT));
    /** The expected capabilities of a session engine ({@code cerberus.mode=session}). */
    static final Set<Capability> SESSION_CAPABILITIES =
            Collections.unmodifiableSet(EnumSet.of(Capability.SESSION_BOUND, Capability.MULTI_PROCESS));
    /** The expected capabilities of the {@code jdbc:} scheme: what either mode can do. */
    static final Set<Capability> SCHEME_CAPABILITIES = Collections.unmodifiableSet(
            EnumSet.of(Capability.FENCING, Capability.SESSION_BOUND, Capability.MULTI_PROCESS, Capability.INSPECT));

    private Databases() {}

    /** @return the shared PostgreSQL (its URI: {@code jdbc:postgresql://...}, user and password included) */
    static ServerExtension<PostgresServer> postgres() {
        return ServerExtension.shared("jdbc-postgres", PostgresServer::start);
    }

    /**
     * @param postgres the shared PostgreSQL, started before this one (declare it first and give both
     *     fields {@code @Order}: JUnit starts extensions in that order)
     * @param mode the pool mode
     * @return the shared PgBouncer of that pool mode in front of the shared PostgreSQL (its URI:
     *     {@code jdbc:postgresql://...} with PgBouncer's port). Shared, not per class: an extension
     *     of an enclosing class is started again for each of its {@code @Nested} classes
     */
    static ServerExtension<PgBouncerServer> pgBouncer(
            ServerExtension<PostgresServer> postgres, PgBouncerServer.PoolMode mode) {
        return ServerExtension.shared(
                "jdbc-pgbouncer-" + mode,
                () -> PgBouncerServer.builder(postgres.get()).poolMode(mode).start());
    }

    /** @return the shared MariaDB (its URI: {@code jdbc:mariadb://...}, user and password included) */
    static ServerExtension<MariaDbServer> mariaDb() {
        return ServerExtension.shared("jdbc-mariadb", MariaDbServer::start);
    }

    /** @return the shared H2 TCP server (a child JVM) and its in-memory database, which lives as long as the server */
    static ServerExtension<H2Server> h2() {
        return ServerExtension.shared(
                "jdbc-h2", () -> H2Server.builder().inMemory().start());
    }

    /** Appends our settings to a driver URL in the driver's own parameter syntax. */
    static String with(String url, String settings) {
        if (settings.isEmpty()) {
            return url;
        }
        if (url.startsWith("jdbc:h2:")) {
            return url + ";" + settings.replace('&', ';');
        }
        return url + (url.contains("?") ? "&" : "?") + settings;
    }
}
