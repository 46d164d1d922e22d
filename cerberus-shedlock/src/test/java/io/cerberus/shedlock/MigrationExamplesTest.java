package io.cerberus.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.DocExamples;
import org.junit.jupiter.api.Test;

class MigrationExamplesTest {
    @Test
    void theShedLockSectionOfTheMigrationPageShowsOnlyCodeThatCompiles() {
        assertThat(DocExamples.assertEveryJavaBlockIn(
                        "docs/MIGRATION.md",
                        "## From ShedLock",
                        "cerberus-shedlock/src/test/java/io/cerberus/shedlock/MigrationExamples.java"))
                .isEqualTo(5);
    }
}
