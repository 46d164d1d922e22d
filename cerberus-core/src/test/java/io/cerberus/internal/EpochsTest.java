package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The epoch a switch owes an engine: the least above every one seen that is the engine's own. */
class EpochsTest {

    @Test
    void theEpochOwedIsTheLeastAboveTheSeenOneThatBelongsToTheEngine() {
        for (int count = 1; count <= 4; count++) {
            for (int index = 0; index < count; index++) {
                for (long seen = 0; seen < 20; seen++) {
                    long epoch = Epochs.epochOf(index, count, seen);
                    assertThat(epoch)
                            .as("engine %d of %d, after %d", index, count, seen)
                            .isGreaterThan(seen)
                            .isLessThanOrEqualTo(seen + count);
                    assertThat(Math.floorMod(epoch, count))
                            .as("the engine's own")
                            .isEqualTo(index);
                }
            }
        }
        assertThat(Epochs.epochOf(1, 3, 5)).isEqualTo(7);
        assertThat(Epochs.epochOf(2, 3, 5)).isEqualTo(8);
        assertThat(Epochs.epochOf(0, 3, 5)).isEqualTo(6);
    }
}
