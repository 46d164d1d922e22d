package io.cerberus.jdbc;

import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.ServerExtension;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The jdbc idempotency store passes the store conformance suite on H2, PostgreSQL and MariaDB. */
class JdbcIdempotencyConformanceTests {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    @Nested
    class H2 extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return H2.uri();
        }
    }

    @Nested
    class Postgres extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return POSTGRES.uri();
        }
    }

    @Nested
    class MariaDb extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return Databases.with(MARIADB.uri(), "cerberus.mode=session");
        }
    }
}
