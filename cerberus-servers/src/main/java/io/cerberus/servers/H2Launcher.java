package io.cerberus.servers;

import java.lang.reflect.InvocationTargetException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The main class of an {@link H2Server}'s child JVM: creates the database with its user and
 * password, then starts H2's TCP server ({@value H2Server#MAIN_CLASS}) with {@code -ifExists}, so
 * a client can open that database with the password and create no other. The secrets come in the
 * environment ({@value #PASSWORD_ENV}, {@value #TCP_PASSWORD_ENV}), never on the command line,
 * which any local user can read. The JDK and H2 (from the class path, reflectively) only.
 *
 * <p>Arguments: {@code mem|file BASE_DIR USER} then H2 server's own arguments.
 */
final class H2Launcher {
    /** The variable holding the database user's password. */
    static final String PASSWORD_ENV = "CERBERUS_H2_PASSWORD";
    /** The variable holding the password that shuts the TCP server down ({@code -tcpPassword}). */
    static final String TCP_PASSWORD_ENV = "CERBERUS_H2_TCP_PASSWORD";

    private H2Launcher() {}

    /**
     * @param args {@code mem} or {@code file}, the base directory, the user, then H2 server's arguments
     * @throws Exception when the database cannot be made or the server cannot start: the JVM then ends with the cause
     */
    public static void main(String[] args) throws Exception {
        String password = System.getenv(PASSWORD_ENV);
        String tcpPassword = System.getenv(TCP_PASSWORD_ENV);
        if (args.length < 3 || password == null || tcpPassword == null) {
            throw new IllegalArgumentException("usage: mem|file BASE_DIR USER [H2 server options], with " + PASSWORD_ENV
                    + " and " + TCP_PASSWORD_ENV + " in the environment");
        }
        boolean inMemory = args[0].equals("mem");
        String url = inMemory
                ? "jdbc:h2:mem:" + H2Server.DATABASE + ";DB_CLOSE_DELAY=-1"
                : "jdbc:h2:" + args[1] + "/" + H2Server.DATABASE;
        try (Connection created = DriverManager.getConnection(url, args[2], password)) {
            created.isValid(1); // the first login creates the database, with this user as its administrator
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "could not create or open the database " + url + " as " + args[2]
                            + (inMemory
                                    ? ""
                                    : " (a database left in " + args[1]
                                            + " by an earlier start has another password: delete it)")
                            + ": " + e,
                    e);
        }
        List<String> server = new ArrayList<>(List.of(args).subList(3, args.length));
        server.addAll(List.of("-ifExists", "-tcpPassword", tcpPassword));
        try {
            Class.forName(H2Server.MAIN_CLASS).getMethod("main", String[].class).invoke(null, (Object)
                    server.toArray(String[]::new));
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
