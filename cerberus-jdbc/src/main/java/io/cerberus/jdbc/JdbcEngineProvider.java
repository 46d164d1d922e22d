package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.EnumSet;
import java.util.Set;

/**
 * Opens {@code jdbc:} engines. See {@link JdbcTarget} for the URI, {@link JdbcOptions} for the
 * settings, {@link LeaseRowEngine} and {@link SessionEngine} for the two modes.
 */
public final class JdbcEngineProvider implements EngineProvider {

    /** Needed by {@link java.util.ServiceLoader}. */
    public JdbcEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("jdbc");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        Set<Capability> all = EnumSet.copyOf(LeaseRowEngine.CAPABILITIES);
        all.addAll(SessionEngine.CAPABILITIES);
        return all;
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return JdbcTarget.PLAIN_PARAMETERS;
    }

    @Override
    public LockEngine open(EngineContext context) {
        JdbcOptions options =
                context.option(JdbcOptions.class, Set.of(JdbcOptions.class)).orElseGet(JdbcOptions::defaults);
        JdbcTarget target = JdbcTarget.parse(context.uri(), options);
        ConnectionSource source = ConnectionSource.of(target, options, context.connectTimeout());
        try {
            SqlDialect dialect = prepare(source, target);
            dialect.configure(source);
            Db db = new Db(source, dialect, context.connectTimeout());
            if (target.mode() == JdbcOptions.Mode.SESSION) {
                return new SessionEngine(
                        db, target.createTable(), target.sessionCheckInterval(), context.lossReporter());
            }
            return new LeaseRowEngine(db, target.createTable());
        } catch (RuntimeException e) {
            source.close();
            throw e;
        }
    }

    /** Connects once: finds the dialect, checks the connections for the mode, and makes sure the tables of the mode are there. */
    private static SqlDialect prepare(ConnectionSource source, JdbcTarget target) {
        Connection connection;
        try {
            connection = source.borrow();
        } catch (SQLException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("No suitable driver")) {
                throw new IllegalArgumentException(
                        "no JDBC driver on the class path accepts " + target.describe()
                                + "; add the database's driver (org.postgresql:postgresql, org.mariadb.jdbc:mariadb-java-client, "
                                + "com.h2database:h2)",
                        e);
            }
            throw new EngineUnavailableException(
                    "could not connect to " + target.describe() + ": " + e.getMessage(), e);
        }
        boolean broken = false;
        try {
            SqlDialect dialect =
                    SqlDialect.of(connection.getMetaData().getDatabaseProductName(), target.describe(), target.table());
            dialect.checkConnections(connection, source, target);
            LockTable tables = new LockTable(connection, target);
            if (target.mode() == JdbcOptions.Mode.SESSION) {
                dialect.prepareSessionLocks(tables);
            } else {
                dialect.prepareLeaseRows(tables);
            }
            return dialect;
        } catch (SQLException e) {
            broken = SqlErrors.isConnectionFailure(e);
            if (broken) {
                throw new EngineUnavailableException(
                        "could not prepare " + target.describe() + ": " + e.getMessage(), e);
            }
            throw new CerberusException("could not prepare " + target.describe() + ": " + e.getMessage(), e);
        } finally {
            source.giveBack(connection, broken);
        }
    }
}
