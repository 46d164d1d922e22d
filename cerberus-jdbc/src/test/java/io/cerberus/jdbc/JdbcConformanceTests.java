package io.cerberus.jdbc;

import io.cerberus.servers.FreePorts;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import java.util.Optional;
import org.junit.jupiter.api.Nested;

/** The jdbc engine passes the engine conformance suite on H2, PostgreSQL and MariaDB, in both modes. */
class JdbcConformanceTests {

    @Nested
    class H2LeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.h2();
        }

        @Override
        protected Optional<String> unreachableUri() {
            return Optional.of("jdbc:h2:tcp://127.0.0.1:" + FreePorts.next() + "/mem:nothing");
        }
    }

    @Nested
    class H2Session extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.h2(), "cerberus.mode=session");
        }
    }

    @Nested
    class PostgresLeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.postgres();
        }

        @Override
        protected Optional<String> unreachableUri() {
            return Optional.of("jdbc:postgresql://127.0.0.1:" + FreePorts.next() + "/postgres?user=x&password=secret");
        }
    }

    @Nested
    class PostgresSession extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.postgres(), "cerberus.mode=session");
        }
    }

    @Nested
    class MariaDbLeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.mariaDb();
        }

        @Override
        protected Optional<String> unreachableUri() {
            return Optional.of("jdbc:mariadb://127.0.0.1:" + FreePorts.next() + "/x?user=x&password=secret");
        }
    }

    @Nested
    class MariaDbSession extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Servers.with(Servers.mariaDb(), "cerberus.mode=session");
        }
    }
}
