package io.cerberus.bench;

import static io.cerberus.bench.BenchSmoke.runAndReport;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The bench's smoke run on PostgreSQL and MariaDB (see {@link BenchSmoke}): every peer completes cycles.
 */
class SqlBenchSmokeTest {
    @Test
    void everyPostgresPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.postgres(EngineGroups.PEERS.get("postgres"), 4)) {
            assertThat(runAndReport(group))
                    .contains(
                            "### PostgreSQL: contended",
                            "| Cerberus | 2 |",
                            "| Spring JdbcLockRegistry | 2 |",
                            "| ShedLock JDBC (retried at once) | 2 |",
                            "vs JdbcLockRegistry",
                            "1.00×",
                            "### PostgreSQL: many-names",
                            "rows left per name",
                            "### PostgreSQL: held-locks",
                            "| ShedLock JDBC (retried at once) | none");
        }
    }

    @Test
    void everyMariaDbPeerCompletesCycles() throws Exception {
        try (EngineGroup group = EngineGroups.mariaDb(EngineGroups.PEERS.get("mariadb"), 4)) {
            assertThat(runAndReport(group))
                    .contains(
                            "### MariaDB: contended",
                            "| Cerberus | 2 |",
                            "| Cerberus session mode | 2 |",
                            "| Spring JdbcLockRegistry | 2 |",
                            "| ShedLock JDBC (retried at once) | 2 |",
                            "vs JdbcLockRegistry",
                            "1.00×",
                            "MariaDB statements per cycle (Questions)",
                            "### MariaDB: many-names",
                            "rows left per name",
                            "### MariaDB: held-locks");
        }
    }
}
