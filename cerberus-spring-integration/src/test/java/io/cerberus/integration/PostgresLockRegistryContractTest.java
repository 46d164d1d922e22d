package io.cerberus.integration;

import io.cerberus.servers.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The registry contract on a real PostgreSQL (lease rows), the database {@code JdbcLockRegistry} users run. */
class PostgresLockRegistryContractTest extends AbstractLockRegistryContractTest {
    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    String uri() {
        return postgres.uri();
    }
}
