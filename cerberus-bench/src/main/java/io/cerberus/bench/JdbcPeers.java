package io.cerberus.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.cerberus.Cerberus;
import io.cerberus.jdbc.JdbcOptions;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The JDBC peers of Cerberus's {@code jdbc:} lease-row mode on PostgreSQL and MariaDB, each with a HikariCP pool
 * of the size Cerberus's own pool gets in the run.
 */
final class JdbcPeers {
    /** The peer the PostgreSQL and MariaDB tables are compared with. */
    static final String JDBC_LOCK_REGISTRY = "Spring JdbcLockRegistry";

    /** Spring Integration's INT_LOCK table, as its schema-postgresql.sql creates it. */
    static final String INT_LOCK_DDL =
            "CREATE TABLE IF NOT EXISTS INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL,"
                    + " CLIENT_ID CHAR(36), CREATED_DATE TIMESTAMP NOT NULL,"
                    + " EXPIRED_AFTER TIMESTAMP NOT NULL, CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION))";
    /** ShedLock's table, as its documentation gives it for PostgreSQL. */
    static final String SHEDLOCK_DDL =
            "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,"
                    + " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";

    /** Spring Integration's INT_LOCK table, as its schema-mysql.sql creates it (MariaDB). */
    static final String INT_LOCK_DDL_MYSQL =
            "CREATE TABLE IF NOT EXISTS INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL,"
                    + " CLIENT_ID CHAR(36), CREATED_DATE DATETIME(6) NOT NULL,"
                    + " EXPIRED_AFTER DATETIME(6) NOT NULL, CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION)) ENGINE=InnoDB";
    /** ShedLock's table, as its documentation gives it for MySQL (MariaDB). */
    static final String SHEDLOCK_DDL_MYSQL =
            "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,"
                    + " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";

    private JdbcPeers() {}

    static HikariDataSource pool(String jdbcUrl, int size, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /**
     * Cerberus's lease-row mode on an application's HikariCP pool, as the Spring Boot starter's
     * {@code jdbc:datasource} runs it: one connection more than the others get, for the engine's
     * notification listener.
     */
    static Peer cerberusOnPool(String jdbcUrl, int poolSize) {
        HikariDataSource pool = pool(jdbcUrl, poolSize + 1, "bench-cerberus-datasource");
        Cerberus cerberus = Cerberus.builder()
                .engine(jdbcUrl, JdbcOptions.dataSource(pool))
                .namespace("bench")
                .build();
        return Peers.cerberus(cerberus, "Cerberus on a HikariCP DataSource", pool::close);
    }

    /** Spring Integration's {@code JdbcLockRegistry} over its {@code DefaultLockRepository} (polls every 100 ms while it waits). */
    static Peer springJdbc(String jdbcUrl, int poolSize) {
        return springJdbc(jdbcUrl, poolSize, JdbcLockRegistry.DEFAULT_TTL);
    }

    /** {@code JdbcLockRegistry} whose rows expire after this time to live; it renews nothing by itself. */
    static Peer springJdbc(String jdbcUrl, int poolSize, Duration timeToLive) {
        HikariDataSource pool = pool(jdbcUrl, poolSize, "bench-spring-jdbc");
        DefaultLockRepository repository = new DefaultLockRepository(pool);
        repository.setTransactionManager(new DataSourceTransactionManager(pool));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repository.start();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository, timeToLive);
        // obtain() refuses once every cached lock is held: the held-locks workload may hold many
        registry.setCacheCapacity(Integer.MAX_VALUE);
        return new Peer() {
            @Override
            public String name() {
                return JDBC_LOCK_REGISTRY;
            }

            @Override
            public Held lock(String name) {
                return Peers.lockIn(registry, name);
            }

            @Override
            public boolean isLocked(String name) {
                return Peers.isLockedIn(registry, name);
            }

            @Override
            public void close() {
                repository.close();
                pool.close();
            }
        };
    }

    /**
     * ShedLock's JDBC provider (on JdbcTemplate, database time). It is not a blocking lock:
     * {@code lock} returns empty while another holds the name, and this peer asks again at once
     * until it gets the lock; unlock is {@code SimpleLock.unlock()}.
     */
    static Peer shedLock(String jdbcUrl, int poolSize) {
        return shedLock(jdbcUrl, poolSize, Duration.ofSeconds(30));
    }

    /** ShedLock's JDBC provider with this lock-at-most-for: a held lock's expiry, never extended. */
    static Peer shedLock(String jdbcUrl, int poolSize, Duration lockAtMostFor) {
        HikariDataSource pool = pool(jdbcUrl, poolSize, "bench-shedlock");
        JdbcTemplateLockProvider provider =
                new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                        .withJdbcTemplate(new JdbcTemplate(pool))
                        .usingDbTime()
                        .build());
        return new Peer() {
            @Override
            public String name() {
                return "ShedLock JDBC (retried at once)";
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                while (true) {
                    Optional<SimpleLock> lock =
                            provider.lock(new LockConfiguration(Instant.now(), name, lockAtMostFor, Duration.ZERO));
                    if (lock.isPresent()) {
                        return lock.get()::unlock;
                    }
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
            }

            @Override
            public boolean isLocked(String name) {
                Optional<SimpleLock> lock =
                        provider.lock(new LockConfiguration(Instant.now(), name, lockAtMostFor, Duration.ZERO));
                lock.ifPresent(SimpleLock::unlock);
                return lock.isEmpty();
            }

            @Override
            public void close() {
                pool.close();
            }
        };
    }

    /** Two {@code SELECT 1} on one pooled connection per cycle: no lock that writes a row and frees it can beat it. */
    static Peer roundTripFloor(String jdbcUrl, int poolSize) {
        HikariDataSource pool = pool(jdbcUrl, poolSize, "bench-floor");
        return new Peer() {
            @Override
            public String name() {
                return "2 round trips (SELECT 1, SELECT 1)";
            }

            @Override
            public Held lock(String name) {
                try {
                    Connection connection = pool.getConnection();
                    Statement statement = connection.createStatement();
                    statement.execute("SELECT 1");
                    return () -> {
                        try (connection;
                                statement) {
                            statement.execute("SELECT 1");
                        } catch (SQLException e) {
                            throw new IllegalStateException("SELECT 1 failed", e);
                        }
                    };
                } catch (SQLException e) {
                    throw new IllegalStateException("SELECT 1 failed", e);
                }
            }

            @Override
            public void close() {
                pool.close();
            }
        };
    }
}
