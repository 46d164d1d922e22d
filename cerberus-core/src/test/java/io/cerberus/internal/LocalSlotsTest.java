package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A client's notes of a semaphore's slots: who marked a slot, who may clear it, which line a waiter picks. */
class LocalSlotsTest {

    @Test
    void acquisitionIdsAreNeverZeroAndNeverRepeat() {
        long first = LocalSlots.newId();
        long second = LocalSlots.newId();
        assertThat(first).isNotZero();
        assertThat(second).isNotZero().isNotEqualTo(first);
    }

    @Test
    void aSlotIsMarkedByOneAcquisitionAtATimeAndOnlyItsOwnMarkIsCleared() {
        LocalSlots slots = new LocalSlots(3);
        long mine = LocalSlots.newId();
        long theirs = LocalSlots.newId();
        assertThat(slots.marked(1)).isFalse();

        assertThat(slots.mark(1, mine)).isTrue();
        assertThat(slots.marked(1)).isTrue();
        assertThat(slots.mark(1, theirs)).as("marked already").isFalse();
        slots.clear(1, theirs);
        slots.unmark(1, theirs);
        assertThat(slots.marked(1)).as("another's clear leaves my mark").isTrue();

        slots.clear(1, mine);
        assertThat(slots.marked(1)).isFalse();
        assertThat(slots.mark(1, theirs)).isTrue();
        slots.unmark(1, theirs);
        assertThat(slots.marked(1)).isFalse();
    }

    @Test
    void aSlotLetGoWhileThreadsHereWaitForItStaysMarkedHandedUntilAWaiterTakesIt() {
        LocalSlots slots = new LocalSlots(2);
        long holder = LocalSlots.newId();
        long waiter = LocalSlots.newId();
        slots.mark(0, holder);
        slots.waiting(0, 1);

        slots.clear(0, holder);
        assertThat(slots.marked(0))
                .as("handed to the waiter here: no scan asks for it")
                .isTrue();
        assertThat(slots.mark(0, LocalSlots.newId())).isFalse();

        slots.markGranted(0, waiter);
        slots.waiting(0, -1);
        slots.clear(0, holder);
        assertThat(slots.marked(0))
                .as("the old holder's late clear leaves the waiter's mark")
                .isTrue();
        slots.clear(0, waiter);
        assertThat(slots.marked(0)).as("nobody waits any more").isFalse();
    }

    @Test
    void unmarkingASlotNotGotFreesItEvenWhileThreadsWaitForIt() {
        LocalSlots slots = new LocalSlots(1);
        long asker = LocalSlots.newId();
        slots.mark(0, asker);
        slots.waiting(0, 2);
        slots.unmark(0, asker);
        assertThat(slots.marked(0)).isFalse();
    }

    @Test
    void aWaiterPicksTheMarkedSlotWithFewestWaitersHereTheFirstOfATie() {
        LocalSlots slots = new LocalSlots(4);
        assertThat(slots.quietestMarked(List.of(0, 1, 2, 3))).as("none marked").isEqualTo(-1);
        slots.mark(1, LocalSlots.newId());
        slots.mark(2, LocalSlots.newId());
        slots.mark(3, LocalSlots.newId());
        slots.waiting(1, 2);
        slots.waiting(2, 1);
        slots.waiting(3, 1);

        assertThat(slots.quietestMarked(List.of(0, 1, 2, 3))).isEqualTo(2);
        assertThat(slots.quietestMarked(List.of(3, 2, 1))).isEqualTo(3);
        assertThat(slots.quietestMarked(List.of(0, 1))).isEqualTo(1);
        assertThat(slots.quietestMarked(List.of(0))).isEqualTo(-1);
    }

    @Test
    void slotsBeyondThisClientsCountAreNeverMarkedAndNeverFail() {
        LocalSlots slots = new LocalSlots(2);
        long id = LocalSlots.newId();
        assertThat(slots.mark(2, id)).isFalse();
        assertThat(slots.marked(2)).isFalse();
        slots.markGranted(2, id);
        slots.clear(2, id);
        slots.unmark(2, id);
        slots.waiting(2, 1);
        assertThat(slots.quietestMarked(List.of(2))).isEqualTo(-1);
    }
}
