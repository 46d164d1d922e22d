package io.cerberus.jdbc;

import io.cerberus.Capability;
import io.cerberus.servers.PgBouncerServer;
import io.cerberus.servers.PgBouncerServer.PoolMode;
import io.cerberus.servers.PostgresServer;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.AbstractLockEngineConformanceTest;
import io.cerberus.testkit.ServerExtension;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The jdbc engine passes the engine conformance suite through a real PgBouncer in front of the
 * shared PostgreSQL: lease-row mode in transaction pooling, session mode in session pooling (session
 * mode through transaction pooling is refused at start: {@link JdbcPgBouncerTest}); and the
 * idempotency store through transaction pooling, whose waiters poll. Lease-row mode through session
 * pooling sends what it sends on a direct connection, on a server session that stays the client's:
 * {@link JdbcPgBouncerTest} checks that the probe tells it apart and that its waiters hear releases.
 */
class JdbcPgBouncerConformanceTests {
    @RegisterExtension
    @Order(1)
    static final ServerExtension<PostgresServer> POSTGRES = Databases.postgres();

    @RegisterExtension
    @Order(2)
    static final ServerExtension<PgBouncerServer> TRANSACTION_POOLED =
            Databases.pgBouncer(POSTGRES, PoolMode.TRANSACTION);

    @RegisterExtension
    @Order(3)
    static final ServerExtension<PgBouncerServer> SESSION_POOLED = Databases.pgBouncer(POSTGRES, PoolMode.SESSION);

    @Nested
    class TransactionPoolingLeaseRow extends AbstractLockEngineConformanceTest {
        @Override
        protected Optional<String> semaphoreCasesRunBy() {
            return Optional.of("JdbcConformanceTests.PostgresLeaseRow, without the pool");
        }

        @Override
        protected String engineUri() {
            return TRANSACTION_POOLED.uri();
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
        protected boolean releasesByForce() {
            return true;
        }
    }

    @Nested
    class SessionPoolingSession extends AbstractLockEngineConformanceTest {
        @Override
        protected Optional<String> semaphoreCasesRunBy() {
            return Optional.of("JdbcConformanceTests.PostgresSession, without the pool");
        }

        @Override
        protected String engineUri() {
            return Databases.with(SESSION_POOLED.uri(), "cerberus.mode=session");
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
    class TransactionPoolingIdempotency extends AbstractIdempotencyStoreConformanceTest {
        @Override
        protected String engineUri() {
            return TRANSACTION_POOLED.uri();
        }
    }
}
