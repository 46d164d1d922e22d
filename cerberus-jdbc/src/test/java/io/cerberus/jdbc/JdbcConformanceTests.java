package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.servers.FreePorts;
import io.cerberus.servers.H2Server;
import io.cerberus.servers.MariaDbServer;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The jdbc engine passes the engine conformance suite on H2, PostgreSQL and MariaDB, in both modes. */
class JdbcConformanceTests {
    @RegisterExtension
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    static final ServerExtension<MariaDbServer> MARIADB = Databases.mariaDb();

    @RegisterExtension
    static final ServerExtension<H2Server> H2 = Databases.h2();

    @Nested
    class H2LeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return H2.uri();
        }

        @Override
        protected Set<Capability> expectedCapabilities() {
            return Databases.LEASE_ROW_CAPABILITIES;
        }

        @Override
        protected Set<Capability> expectedCapabilitiesOfScheme() {
            return Databases.SCHEME_CAPABILITIES;
        }

        @Override
        protected Optional<String> unreachableUri() {
            return Optional.of("jdbc:h2:tcp://127.0.0.1:" + FreePorts.next() + "/mem:nothing");
        }

        @Override
        protected boolean releasesByForce() {
            return true;
        }
    }

    @Nested
    class H2Session extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Databases.with(H2.uri(), "cerberus.mode=session");
        }

        @Override
        protected Set<Capability> expectedCapabilities() {
            return Databases.SESSION_CAPABILITIES;
        }

        @Override
        protected Set<Capability> expectedCapabilitiesOfScheme() {
            return Databases.SCHEME_CAPABILITIES;
        }
    }

    @Nested
    class PostgresLeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return POSTGRES.uri();
        }

        @Override
        protected Set<Capability> expectedCapabilities() {
            return Databases.LEASE_ROW_CAPABILITIES;
        }

        @Override
        protected Set<Capability> expectedCapabilitiesOfScheme() {
            return Databases.SCHEME_CAPABILITIES;
        }

        @Override
        protected Optional<String> unreachableUri() {
            return Optional.of("jdbc:postgresql://127.0.0.1:" + FreePorts.next() + "/postgres?user=x&password=secret");
        }

        @Override
        protected boolean releasesByForce() {
            return true;
        }
    }

    @Nested
    class PostgresSession extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Databases.with(POSTGRES.uri(), "cerberus.mode=session");
        }

        @Override
        protected Set<Capability> expectedCapabilities() {
            return Databases.SESSION_CAPABILITIES;
        }

        @Override
        protected Set<Capability> expectedCapabilitiesOfScheme() {
            return Databases.SCHEME_CAPABILITIES;
        }
    }

    @Nested
    class MariaDbLeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return MARIADB.uri();
        }

        @Override
        protected Set<Capability> expectedCapabilities() {
            return Databases.LEASE_ROW_CAPABILITIES;
        }

        @Override
        protected Set<Capability> expectedCapabilitiesOfScheme() {
            return Databases.SCHEME_CAPABILITIES;
        }

        @Override
        protected Optional<String> unreachableUri() {
            return Optional.of("jdbc:mariadb://127.0.0.1:" + FreePorts.next() + "/x?user=x&password=secret");
        }

        @Override
        protected boolean releasesByForce() {
            return true;
        }
    }

    @Nested
    class MariaDbSession extends AbstractLockEngineConformanceTest {
        @Override
        protected String engineUri() {
            return Databases.with(MARIADB.uri(), "cerberus.mode=session");
        }

        @Override
        protected Set<Capability> expectedCapabilities() {
            return Databases.SESSION_CAPABILITIES;
        }

        @Override
        protected Set<Capability> expectedCapabilitiesOfScheme() {
            return Databases.SCHEME_CAPABILITIES;
        }
    }
}
