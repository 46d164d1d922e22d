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
        assertThat(slots.take(a, 1)).isZero();
        assertThat(slots.take(a, 1)).isEqualTo(1);
        assertThat(slots.take(a, 1)).isEqualTo(2);
        assertThat(slots.take(b, 1)).as("numbers are per lock").isZero();
        slots.free(a, 1);
        assertThat(slots.take(a, 1)).as("a number given back is the next taken").isEqualTo(1);
        slots.free(a, 0);
        slots.free(a, 1);
        slots.free(a, 2);
        slots.free(b, 0);
        assertThat(slots.locks()).as("no entry is kept for a lock nobody tries").isZero();
    }

    @Test
    void aRetiredNumberIsNotTakenAgainUnderItsLeaseButIsUnderTheNext() {
        KeySlots slots = new KeySlots();
        LockKey a = new LockKey("ns", "a");
        assertThat(slots.take(a, 7)).isZero();
        slots.retire(a, 0, 7);
        assertThat(slots.locks())
                .as("the lock's entry stays while a number is retired")
                .isEqualTo(1);
        assertThat(slots.take(a, 7)).as("the retired number is skipped").isEqualTo(1);
        assertThat(slots.take(a, 7)).isEqualTo(2);
        slots.free(a, 1);
        assertThat(slots.take(a, 7)).as("a number given back is taken again").isEqualTo(1);
        slots.free(a, 1);
        slots.free(a, 2);
        assertThat(slots.take(a, 8))
                .as("under the next lease the key names differ: the number is free")
                .isZero();
        slots.free(a, 0);
        assertThat(slots.locks()).isZero();
    }

    @Test
    void numbersRetiredUnderALeaseThatEndedAreForgotten() {
        KeySlots slots = new KeySlots();
        LockKey a = new LockKey("ns", "a");
        LockKey b = new LockKey("ns", "b");
        slots.retire(a, slots.take(a, 7), 7);
        slots.retire(b, slots.take(b, 9), 9);
        slots.dropRetired(7);
        assertThat(slots.locks())
                .as("only the lock with a number retired under the live lease is kept")
                .isEqualTo(1);
        assertThat(slots.take(b, 9)).isEqualTo(1);
    }
}
