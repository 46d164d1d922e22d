package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.LockContention;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A client's table of waits per lock: its order, its bound, and what a new name displaces. */
class ContentionTest {

    @Test
    void theLocksComeTheMostTotalWaitFirstThenByName() {
        Contention contention = new Contention();
        contention.record("b", 5, false, "");
        contention.record("a", 5, false, "");
        contention.record("c", 3, true, "host-1");
        contention.record("c", 4, false, "");

        List<LockContention> locks = contention.snapshot();
        assertThat(locks).extracting(LockContention::name).containsExactly("c", "a", "b");
        LockContention c = locks.get(0);
        assertThat(c.contended()).isEqualTo(2);
        assertThat(c.totalWait()).isEqualTo(Duration.ofNanos(7));
        assertThat(c.longestWait()).isEqualTo(Duration.ofNanos(4));
        assertThat(c.timedOut()).isEqualTo(1);
        assertThat(c.lastHolder()).as("an unknown holder keeps the last known").isEqualTo("host-1");
    }

    @Test
    void aFullTableGivesTheNameWithTheLeastTotalWaitsPlaceToANewOne() {
        Contention contention = new Contention();
        for (int i = 0; i < Contention.NAMES; i++) {
            contention.record("lock-" + i, i == 7 ? 1 : 1_000 + i, false, "");
        }
        contention.record("lock-7", 0, false, "");
        assertThat(contention.snapshot()).hasSize(Contention.NAMES);

        contention.record("newcomer", 10, false, "");

        assertThat(contention.snapshot())
                .hasSize(Contention.NAMES)
                .extracting(LockContention::name)
                .contains("newcomer", "lock-0")
                .doesNotContain("lock-7");
    }
}
