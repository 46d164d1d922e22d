package io.cerberus.jdbc;

import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import org.junit.jupiter.api.Nested;

/** The jdbc idempotency store passes the store conformance suite on H2, PostgreSQL and MariaDB. */
class JdbcIdempotencyConformanceTests {

    @Nested
    class H2 extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.h2();
        }
    }

    @Nested
    class Postgres extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.postgres();
        }
    }

    @Nested
    class MariaDb extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.mariaDb(), "cerberus.mode=session");
        }
    }
}
