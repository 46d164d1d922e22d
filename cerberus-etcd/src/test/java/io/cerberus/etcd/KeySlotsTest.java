package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.spi.LockKey;
import org.junit.jupiter.api.Test;

class KeySlotsTest {
    @Test
    void anAttemptTakesTheLowestFreeNumberOfItsLock() {
        KeySlots slots = new KeySlots();
        LockKey a = new LockKey("ns", "a");
        LockKey b = new LockKey("ns", "b");
        assertThat(slots.take(a)).isZero();
        assertThat(slots.take(a)).isEqualTo(1);
        assertThat(slots.take(a)).isEqualTo(2);
        assertThat(slots.take(b)).as("numbers are per lock").isZero();
        slots.free(a, 1);
        assertThat(slots.take(a)).as("a number given back is the next taken").isEqualTo(1);
        slots.free(a, 0);
        slots.free(a, 1);
        slots.free(a, 2);
        slots.free(b, 0);
        assertThat(slots.locks()).as("no entry is kept for a lock nobody tries").isZero();
    }
}
