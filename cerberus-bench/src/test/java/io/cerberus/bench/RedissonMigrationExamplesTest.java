package io.cerberus.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.Lease;
import io.cerberus.testkit.DocExamples;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RedissonMigrationExamplesTest {
    @Test
    void theRedissonSectionOfTheMigrationPageShowsOnlyCodeThatCompiles() {
        assertThat(DocExamples.assertEveryJavaBlockIn(
                        "docs/MIGRATION.md",
                        "## From Redisson",
                        "cerberus-bench/src/test/java/io/cerberus/bench/RedissonMigrationExamples.java"))
                .isEqualTo(14);
    }

    @Test
    void theCerberusSideRunsAndDoesWhatThePageSays() throws Exception {
        RedissonMigrationExamples examples = new RedissonMigrationExamples();
        try (Cerberus cerberus = Cerberus.connect("mem:migration")) {
            examples.cerberusLock(cerberus);
            examples.bothTryLock(cerberus.lock("order:42"));
            examples.cerberusFencedLock(cerberus);
            examples.cerberusReadWriteLock(cerberus);
            examples.cerberusLoss(cerberus);
            examples.cerberusAsync(cerberus).get(5, TimeUnit.SECONDS);

            Lease stuck = cerberus.lock("order:42").acquire(Duration.ZERO);
            assertThat(stuck.fencingToken()).isPositive();
            examples.cerberusForceRelease(cerberus);
            assertThat(cerberus.lock("order:42").isLocked()).isFalse();
        }
        assertThat(examples.shipping.shipped).isEqualTo(2);
        assertThat(examples.ledger.lastToken).isPositive();
        assertThat(examples.catalog.reads).isEqualTo(1);
        assertThat(examples.report.fence).isNotNull();
        assertThat(examples.report.aborted).isFalse();
    }
}
