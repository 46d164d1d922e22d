package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.spi.LockKey;
import org.junit.jupiter.api.Test;

/** A name's first release is not "again"; later ones are, until a name of the same slot takes the slot. */
class RecentReleasesTest {
    private static String key(String name) {
        return LockRows.key("cerberus_locks", new LockKey("ns", name));
    }

    @Test
    void aNameIsReleasedAgainFromItsSecondRelease() {
        RecentReleases recent = new RecentReleases();
        assertThat(recent.releasedAgain(key("order:1"))).isFalse();
        assertThat(recent.releasedAgain(key("order:1"))).isTrue();
        assertThat(recent.releasedAgain(key("order:1"))).isTrue();
        assertThat(recent.releasedAgain(key("order:2"))).as("another name").isFalse();
    }

    @Test
    void aNameOfTheSameSlotMakesTheTableForgetTheEarlierOne() {
        RecentReleases recent = new RecentReleases();
        String first = key("order:1");
        String sameSlot = null;
        for (int i = 2; sameSlot == null; i++) {
            String candidate = key("order:" + i);
            if (slot(candidate) == slot(first)) {
                sameSlot = candidate;
            }
        }
        recent.releasedAgain(first);
        assertThat(recent.releasedAgain(sameSlot)).isFalse();
        assertThat(recent.releasedAgain(first))
                .as("forgotten: its slot was taken")
                .isFalse();
        assertThat(recent.releasedAgain(first)).isTrue();
    }

    @Test
    void manyNamesReleasedOnceAreNeverReleasedAgain() {
        RecentReleases recent = new RecentReleases();
        for (int i = 0; i < 4 * RecentReleases.SLOTS; i++) {
            assertThat(recent.releasedAgain(key("entity:" + i)))
                    .as("entity:%d", i)
                    .isFalse();
        }
    }

    private static int slot(String key) {
        long fingerprint = Long.parseUnsignedLong(key.substring(0, 16), 16) | 1;
        return (int) (fingerprint >>> 1) & (RecentReleases.SLOTS - 1);
    }
}
