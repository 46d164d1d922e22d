package io.cerberus.shedlock;

import io.cerberus.servers.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's provider suite on a real PostgreSQL server (the lease-row engine). */
class PostgresShedLockSuiteTest extends ShedLockSuite {
    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        postgres.close();
    }

    @Override
    protected String engineUri() {
        return postgres.uri();
    }
}
