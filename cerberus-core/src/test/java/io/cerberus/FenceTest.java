package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class FenceTest {
    @Test
    void fencesOrderByEpochThenToken() {
        assertThat(new Fence(0, 9).isOlderThan(new Fence(0, 10))).isTrue();
        assertThat(new Fence(0, 1_000_000).isOlderThan(new Fence(1, 3)))
                .as("a larger epoch wins whatever the tokens")
                .isTrue();
        assertThat(new Fence(1, 3).isOlderThan(new Fence(1, 3))).isFalse();
        assertThat(new Fence(2, 1)).isGreaterThan(new Fence(1, Long.MAX_VALUE));
    }

    @Test
    void theTextFormRoundTripsAndABareTokenIsEpochZero() {
        assertThat(Fence.parse(new Fence(3, 42).toString())).isEqualTo(new Fence(3, 42));
        assertThat(Fence.parse("42")).isEqualTo(new Fence(0, 42));
        assertThatThrownBy(() -> Fence.parse("3:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("EPOCH:TOKEN");
        assertThatThrownBy(() -> Fence.parse(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was empty");
        assertThatThrownBy(() -> new Fence(0, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be negative");
    }

    @Test
    void aLeaseGivesItsFence() throws Exception {
        try (Cerberus cerberus = Cerberus.connect("mem:fence-test");
                Lease lease = cerberus.lock("a").acquire(Duration.ofSeconds(1))) {
            assertThat(Fence.of(lease)).isEqualTo(new Fence(0, lease.fencingToken()));
        }
    }
}
