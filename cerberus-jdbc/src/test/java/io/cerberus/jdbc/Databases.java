package io.cerberus.jdbc;

import io.cerberus.servers.Deployment;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.servers.ServerException;
import io.cerberus.testkit.ServerExtension;
import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * The database servers the test classes of this module share: one of each kind per test run,
 * started by the first class that declares it and stopped by JUnit when the run ends. A class
 * declares each one it uses,
 * {@code @RegisterExtension static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();},
 * and its nested classes inherit it. A test that kills or restarts a server starts its own.
 */
final class Databases {
    private Databases() {
    }

    /** @return the shared PostgreSQL (its URI: {@code jdbc:postgresql://...}, user and password included) */
    static ServerExtension<PostgresServer> postgres() {
        return ServerExtension.shared("jdbc-postgres", PostgresServer::start);
    }

    /** @return the shared MariaDB (its URI: {@code jdbc:mariadb://...}, user and password included) */
    static ServerExtension<MariaDbServer> mariaDb() {
        return ServerExtension.shared("jdbc-mariadb", MariaDbServer::start);
    }

    /** @return the shared H2 TCP server of this JVM (so child JVMs reach it too) and its in-memory database */
    static ServerExtension<H2TcpServer> h2() {
        return ServerExtension.shared("jdbc-h2", H2TcpServer::start);
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

    /** An H2 TCP server in this JVM with an in-memory database that lives as long as the server. */
    static final class H2TcpServer implements Deployment {
        private final Server server;

        private H2TcpServer(Server server) {
            this.server = server;
        }

        static H2TcpServer start() {
            try {
                return new H2TcpServer(Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start());
            } catch (SQLException e) {
                throw new ServerException("could not start an H2 TCP server: " + e.getMessage(), e);
            }
        }

        @Override
        public String uri() {
            return "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:cerberus;DB_CLOSE_DELAY=-1";
        }

        /** Nothing to heal: no test faults the H2 server. */
        @Override
        public void heal() {
        }

        @Override
        public void close() {
            server.stop();
        }
    }
}
