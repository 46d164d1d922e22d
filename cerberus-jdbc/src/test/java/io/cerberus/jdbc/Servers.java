package io.cerberus.jdbc;

import java.sql.SQLException;
import org.h2.tools.Server;

/**
 * The database servers shared by the test classes of this JVM: started on first use, stopped when
 * the JVM ends. Tests that restart or kill a server start their own.
 */
final class Servers {
    private static DatabaseServer.Postgres postgres;
    private static DatabaseServer.MariaDb mariaDb;
    private static Server h2;

    private Servers() {
    }

    static synchronized String postgres() {
        if (postgres == null) {
            postgres = DatabaseServer.Postgres.start();
            DatabaseServer.Postgres started = postgres;
            Runtime.getRuntime().addShutdownHook(new Thread(started::close));
        }
        return postgres.url();
    }

    static synchronized String mariaDb() {
        if (mariaDb == null) {
            mariaDb = DatabaseServer.MariaDb.start();
            DatabaseServer.MariaDb started = mariaDb;
            Runtime.getRuntime().addShutdownHook(new Thread(started::close));
        }
        return mariaDb.url();
    }

    /** @return an H2 database in an H2 TCP server of this JVM, so child JVMs reach it too */
    static synchronized String h2() {
        if (h2 == null) {
            try {
                h2 = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
            } catch (SQLException e) {
                throw new IllegalStateException("could not start an H2 TCP server", e);
            }
            Server started = h2;
            Runtime.getRuntime().addShutdownHook(new Thread(started::stop));
        }
        return "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:cerberus;DB_CLOSE_DELAY=-1";
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
