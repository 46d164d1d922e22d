package io.cerberus.jdbc;

import io.cerberus.testkit.AbstractMultiProcessConformanceTest;
import org.junit.jupiter.api.Nested;

/** The jdbc engine passes the multi-process conformance suite on H2, PostgreSQL and MariaDB, in both modes. */
class JdbcMultiProcessConformanceTests {

    @Nested
    class H2LeaseRow extends AbstractMultiProcessConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.h2();
        }
    }

    @Nested
    class H2Session extends AbstractMultiProcessConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.h2(), "cerberus.mode=session");
        }
    }

    @Nested
    class PostgresLeaseRow extends AbstractMultiProcessConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.postgres();
        }
    }

    @Nested
    class PostgresSession extends AbstractMultiProcessConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.postgres(), "cerberus.mode=session");
        }
    }

    @Nested
    class MariaDbLeaseRow extends AbstractMultiProcessConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.mariaDb();
        }
    }

    @Nested
    class MariaDbSession extends AbstractMultiProcessConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.mariaDb(), "cerberus.mode=session");
        }
    }
}
