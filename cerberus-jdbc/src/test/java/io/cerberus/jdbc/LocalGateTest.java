package io.cerberus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.Condition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The line of local waiters by itself, without a database: who asks, who waits, who is woken. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalGateTest {
    private final String key = "gate-" + UUID.randomUUID();
    private final LocalGate gate = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), null);

    @AfterEach
    void close() {
        gate.close();
    }

    @Test
    void onlyTheHeadAsksAndTheNextAsksOnceItLeaves() {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        assertThat(tryOnce(first)).as("the head asks").isNull();
        assertThat(tryOnce(second)).as("the second waits in line").isNotNull();
        assertThat(second.asked()).isFalse();
        first.leave();
        assertThat(tryOnce(second)).as("the second is the head now").isNull();
        assertThat(second.asked()).isTrue();
        second.leave();
    }

    @Test
    void headGrantedMarksTheLineUntilItsHoldIsReleasedHere() {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        assertThat(tryOnce(first)).isNull();
        first.granted("first-token", Duration.ofSeconds(30));
        assertThat(gate.holds("first-token")).isTrue();
        AcquireResult.Busy held = tryOnce(second);
        assertThat(held).as("the next head does not ask while the lock is held here").isNotNull();
        assertThat(held.retryWithin()).isGreaterThan(Duration.ofSeconds(20)).isLessThanOrEqualTo(Duration.ofSeconds(30));
        gate.released(key, "first-token");
        assertThat(gate.holds("first-token")).isFalse();
        assertThat(tryOnce(second)).as("released: the head asks").isNull();
        second.leave();
    }

    @Test
    void markRunsOutWithTheHoldersLease() {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        tryOnce(first);
        first.granted("first-token", Duration.ofMillis(50));
        long until = System.nanoTime() + Duration.ofMillis(60).toNanos();
        Poll.until("the holder's lease to pass", TestTimes.millis(5000), () -> System.nanoTime() - until > 0);
        assertThat(tryOnce(second)).as("the hold may have expired: the head asks").isNull();
        second.leave();
    }

    @Test
    void busyAnswerNamingAHoldOfThisEngineWaitsForItsRelease() throws Exception {
        LocalGate.Ticket holder = enter();
        tryOnce(holder);
        holder.granted("holder-token", Duration.ofSeconds(30));
        LocalGate.Ticket head = enter();
        assertThat(tryOnce(head)).as("a newcomer to an empty line asks").isNull();
        head.busy("holder-token", Duration.ofSeconds(30));
        assertThat(tryOnce(head)).as("told the holder is here, it waits for the release").isNotNull();
        CountDownLatch woken = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                head.await(Duration.ofSeconds(30));
                woken.countDown();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "head");
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        gate.released(key, "holder-token");
        assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS)).as("the release wakes the head").isTrue();
        assertThat(failure.get()).isNull();
        assertThat(tryOnce(head)).isNull();
        head.leave();
    }

    @Test
    void busyAnswerNamingAHoldAlreadyReleasedDoesNotMarkTheLine() {
        LocalGate.Ticket holder = enter();
        tryOnce(holder);
        holder.granted("holder-token", Duration.ofSeconds(30));
        LocalGate.Ticket head = enter();
        tryOnce(head);
        gate.released(key, "holder-token");
        head.busy("holder-token", Duration.ofSeconds(30));
        assertThat(tryOnce(head)).as("the answer came before the release was known: ask again").isNull();
        head.leave();
    }

    @Test
    void queuedWaiterIsWokenWhenTheHeadLeaves() throws Exception {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        tryOnce(first);
        tryOnce(second);
        CountDownLatch woken = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                second.await(Duration.ofSeconds(30));
                woken.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "second");
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        long left = System.nanoTime();
        first.leave();
        assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - left)).as("woken by the hand-over, not a recheck")
                .isLessThan(Duration.ofMillis(500));
        assertThat(tryOnce(second)).isNull();
        second.leave();
    }

    @Test
    void waiterWhoseTurnComesWithAGrantWaitsForTheReleaseHere() throws Exception {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        tryOnce(first);
        tryOnce(second);
        CountDownLatch returned = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                second.await(Duration.ofSeconds(30));
                returned.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "second");
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        first.granted("first-token", Duration.ofSeconds(30));
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        assertThat(returned.getCount()).as("the grant does not send the next head to ask").isEqualTo(1);
        long released = System.nanoTime();
        gate.released(key, "first-token");
        assertThat(returned.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - released)).as("woken by the release").isLessThan(Duration.ofMillis(500));
        assertThat(tryOnce(second)).as("released: it asks").isNull();
        second.leave();
    }

    @Test
    void queuedWaitEndsAtItsBound() throws Exception {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        tryOnce(first);
        tryOnce(second);
        long start = System.nanoTime();
        second.await(Duration.ofMillis(300));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(Duration.ofMillis(300).plus(TestTimes.millis(500)));
        first.leave();
        second.leave();
    }

    @Test
    void interruptedQueuedWaiterThrowsAndLeavingKeepsTheLineMoving() throws Exception {
        LocalGate.Ticket first = enter();
        LocalGate.Ticket second = enter();
        LocalGate.Ticket third = enter();
        tryOnce(first);
        tryOnce(second);
        tryOnce(third);
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                second.await(Duration.ofSeconds(30));
                outcome.set(new AssertionError("returned without an interrupt"));
            } catch (Throwable t) {
                outcome.set(t);
            }
        }, "second");
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        waiter.interrupt();
        waiter.join(TestTimes.millis(5000).toMillis());
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        second.leave();
        first.leave();
        assertThat(tryOnce(third)).as("the third is the head once the others left").isNull();
        third.leave();
    }

    @Test
    void silentHeadIsPassedOver() throws Exception {
        LocalGate.Ticket silent = enter();
        LocalGate.Ticket next = enter();
        assertThat(tryOnce(silent)).isNull();
        assertThat(tryOnce(next)).isNotNull();
        // the silent head neither tries again nor leaves: after the stale bound the next asks in its place
        Poll.until("the silent head to be passed over", TestTimes.millis(10_000), () -> {
            try {
                next.await(Duration.ofMillis(100));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return tryOnce(next) == null;
        });
        assertThat(tryOnce(silent)).as("a head that comes back asks again").isNull();
        silent.leave();
        next.leave();
    }

    @Test
    void releaseHandsTheLockToTheHeadThatWaitsForIt() throws Exception {
        LocalGate.Ticket holder = enter();
        tryOnce(holder);
        holder.granted("holder-token", Duration.ofSeconds(30));
        String releasing = "holder-token";
        for (int handOff = 1; handOff <= 5; handOff++) {
            LocalGate.Ticket head = enter();
            assertThat(tryOnce(head)).as("alone in a new line, it asks").isNull();
            head.busy(releasing, Duration.ofSeconds(30));
            assertThat(tryOnce(head)).as("told the holder is of this engine, it waits for its release").isNotNull();
            assertThat(gate.handOverFrom(key, "another-token")).as("only the hold the line waits for hands over").isNull();
            assertThat(gate.handOverFrom(key, releasing)).as("a head not yet asleep on its turn is not handed the lock").isNull();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    head.await(Duration.ofSeconds(30));
                } catch (Throwable t) {
                    failure.set(t);
                }
            }, "head-" + handOff);
            waiter.start();
            Poll.untilWaiting(waiter, TestTimes.millis(5000));
            LocalGate.HandOver handOver = gate.handOverFrom(key, releasing);
            assertThat(handOver).isNotNull();
            assertThat(handOver.next()).isSameAs(head);
            assertThat(handOver.evenIfWanted()).as("without turns, hand-off %d goes ahead only while no other process waits", handOff)
                    .isFalse();
            assertThat(gate.handOverFrom(key, releasing)).as("one hand-off at a time").isNull();
            long sent = System.nanoTime();
            assertThat(gate.handOverEnded(handOver, 40 + handOff, sent)).isTrue();
            waiter.join(TestTimes.millis(5000).toMillis());
            assertThat(waiter.isAlive()).as("the hand-off wakes the head").isFalse();
            assertThat(failure.get()).isNull();
            AcquireResult granted = head.handedGrant();
            assertThat(granted).isInstanceOf(AcquireResult.Granted.class);
            assertThat(((AcquireResult.Granted) granted).fencingToken()).isEqualTo(40 + handOff);
            assertThat(((AcquireResult.Granted) granted).ageNanos()).as("the lease counts from the hand-off")
                    .isBetween(1L, System.nanoTime() - sent);
            assertThat(gate.holds(head.attempt().token())).isTrue();
            assertThat(head.handedGrant()).as("a grant is taken once").isNull();
            releasing = head.attempt().token();
        }
        gate.released(key, releasing);
    }

    @Test
    void lockHandedToAnAttemptThatLeftMeanwhileIsGivenBackToTheReleaser() throws Exception {
        LocalGate.Ticket head = headWaitingForAHold(gate, "holder-token");
        Thread waiter = new Thread(() -> {
            try {
                head.await(Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "head");
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        LocalGate.HandOver handOver = gate.handOverFrom(key, "holder-token");
        assertThat(handOver).isNotNull();
        waiter.interrupt();
        waiter.join(TestTimes.millis(5000).toMillis());
        head.leave();
        assertThat(gate.handOverEnded(handOver, 7, System.nanoTime())).as("nobody takes the handed lock: the releaser frees it").isFalse();
        assertThat(gate.holds(head.attempt().token())).isFalse();
        gate.released(key, "holder-token");
        LocalGate.Ticket next = enter();
        assertThat(tryOnce(next)).as("the line is free again").isNull();
        next.leave();
    }

    @Test
    void aLockAnotherProcessWaitsForIsHandedOnForATurn() throws Exception {
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofSeconds(30))) {
            LocalGate.Ticket holder = enter(turns);
            tryOnce(holder);
            long grantedAt = System.nanoTime();
            holder.granted("holder-token", Duration.ofSeconds(30));
            String releasing = "holder-token";
            for (int handOff = 1; handOff <= 6; handOff++) {
                LocalGate.HandOver handOver = handOff(turns, releasing, handOff);
                assertThat(handOver.evenIfWanted()).as("hand-off %d within the turn", handOff).isTrue();
                assertThat(handOver.runSince()).as("the turn counts from the run's first grant")
                        .isBetween(grantedAt, System.nanoTime());
                releasing = handOver.next().attempt().token();
            }
            turns.released(key, releasing);
        }
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofNanos(1))) {
            LocalGate.Ticket holder = enter(turns);
            tryOnce(holder);
            holder.granted("holder-token", Duration.ofSeconds(30));
            LocalGate.HandOver handOver = handOff(turns, "holder-token", 1);
            assertThat(handOver.evenIfWanted()).as("the turn is over: released for the other process").isFalse();
            turns.released(key, handOver.next().attempt().token());
        }
    }

    @Test
    void withTurnsTheLineHoldsBackAfterReleasingALockForAnotherProcess() throws Exception {
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofSeconds(30))) {
            LocalGate.Ticket head = headWaitingForAHold(turns, "holder-token");
            long released = System.nanoTime();
            turns.released(key, "holder-token", true);
            AcquireResult.Busy heldBack = tryOnce(head);
            assertThat(heldBack).as("released for another process: the head here does not ask at once").isNotNull();
            assertThat(heldBack.retryWithin()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(LocalGate.YIELD_MS));
            while (tryOnce(head) != null) {
                head.await(Duration.ofSeconds(30));
            }
            assertThat(Duration.ofNanos(System.nanoTime() - released)).as("it asks once the other process had its chance")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(LocalGate.YIELD_MS));
            head.leave();
        }
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofNanos(1))) {
            for (boolean othersWait : new boolean[] {false, true}) {
                LocalGate.Ticket head = headWaitingForAHold(turns, "holder-token");
                if (othersWait) {
                    turns.othersMarked(key, 5000);
                }
                // a plain release (nothing handed over) after the turn
                turns.released(key, "holder-token");
                assertThat(tryOnce(head)).as(othersWait ? "another client marked the lock: the line holds back after its turn"
                        : "nobody else waits: the head asks at once").is(othersWait ? HELD_BACK : ASKS);
                head.leave();
            }
        }
        LocalGate.Ticket head = headWaitingForAHold(gate, "holder-token");
        gate.released(key, "holder-token", true);
        assertThat(tryOnce(head)).as("without turns, the head asks at once").isNull();
        head.leave();
    }

    @Test
    void withTurnsAHeadPollsSoonWhileTheLockChangesHandsElsewhere() throws Exception {
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofSeconds(30))) {
            LocalGate.Ticket head = enter(turns);
            assertThat(tryOnce(head)).isNull();
            head.busy("elsewhere-token", Duration.ofSeconds(30), 5);
            assertThat(head.backoffCeilingMillis()).isEqualTo(LocalGate.MIN_BACKOFF_MS);
            for (int i = 0; i < 3; i++) {
                head.await(Duration.ofSeconds(30));
            }
            assertThat(head.backoffCeilingMillis()).as("the backoff doubles with every busy answer").isEqualTo(8 * LocalGate.MIN_BACKOFF_MS);
            head.busy("elsewhere-token", Duration.ofSeconds(30), 5);
            assertThat(head.backoffCeilingMillis()).as("the same hold: it goes on doubling").isEqualTo(8 * LocalGate.MIN_BACKOFF_MS);
            head.busy("elsewhere-token", Duration.ofSeconds(30), 6);
            assertThat(head.backoffCeilingMillis()).as("a new hold elsewhere: the backoff starts again").isEqualTo(LocalGate.MIN_BACKOFF_MS);
            head.leave();
        }
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofSeconds(30))) {
            LocalGate.Ticket head = enter(turns);
            assertThat(tryOnce(head)).isNull();
            head.busy("elsewhere-token", Duration.ofSeconds(30), 5);
            head.await(Duration.ofSeconds(30));
            head.busy("elsewhere-token", Duration.ofSeconds(30), -1);
            assertThat(head.backoffCeilingMillis()).as("fence not read (a notified engine): the backoff just doubles")
                    .isEqualTo(2 * LocalGate.MIN_BACKOFF_MS);
            head.leave();
        }
        LocalGate.Ticket head = enter();
        assertThat(tryOnce(head)).isNull();
        head.busy("elsewhere-token", Duration.ofSeconds(30), 5);
        head.await(Duration.ofSeconds(30));
        head.busy("elsewhere-token", Duration.ofSeconds(30), 6);
        assertThat(head.backoffCeilingMillis()).as("without turns the backoff just doubles").isEqualTo(2 * LocalGate.MIN_BACKOFF_MS);
        head.leave();
    }

    @Test
    void withinATurnAReleaseLeavesTheLockToTheNextThreadHere() {
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofSeconds(30))) {
            LocalGate.Ticket alone = enter(turns);
            assertThat(tryOnce(alone)).isNull();
            alone.granted("alone-token", Duration.ofSeconds(30));
            assertThat(turns.turnGoesOn(key, "alone-token")).as("nobody here waits: others are woken").isFalse();
            turns.released(key, "alone-token");

            LocalGate.Ticket holder = enter(turns);
            LocalGate.Ticket next = enter(turns);
            assertThat(tryOnce(holder)).isNull();
            holder.granted("holder-token", Duration.ofSeconds(30));
            assertThat(tryOnce(next)).as("held here: it waits").isNotNull();
            assertThat(turns.turnGoesOn(key, "holder-token")).as("a thread here waits, within the turn").isTrue();
            assertThat(turns.turnGoesOn(key, "another-token")).as("only the hold the line waits for").isFalse();
            turns.released(key, "holder-token");
            assertThat(tryOnce(next)).isNull();
            next.granted("next-token", Duration.ofSeconds(30));
            turns.released(key, "next-token");
        }
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofNanos(1))) {
            LocalGate.Ticket holder = enter(turns);
            LocalGate.Ticket next = enter(turns);
            tryOnce(holder);
            holder.granted("holder-token", Duration.ofSeconds(30));
            assertThat(turns.turnGoesOn(key, "holder-token")).as("the turn is over").isFalse();
            next.leave();
            turns.released(key, "holder-token");
        }
        LocalGate.Ticket holder = enter();
        LocalGate.Ticket next = enter();
        tryOnce(holder);
        holder.granted("holder-token", Duration.ofSeconds(30));
        assertThat(gate.turnGoesOn(key, "holder-token")).as("a gate without turns").isFalse();
        next.leave();
        gate.released(key, "holder-token");
    }

    @Test
    void aRunOfHoldsHereGoesOnUntilTheLockIsHeldElsewhere() {
        try (LocalGate turns = new LocalGate(TimeUnit.MILLISECONDS.toNanos(200), Duration.ofSeconds(30))) {
            LocalGate.Ticket first = enter(turns);
            LocalGate.Ticket second = enter(turns);
            LocalGate.Ticket third = enter(turns);
            assertThat(tryOnce(first)).isNull();
            first.granted("first-token", Duration.ofSeconds(30));
            long runSince = turns.runSince("first-token");
            turns.released(key, "first-token");
            assertThat(tryOnce(second)).isNull();
            second.granted("second-token", Duration.ofSeconds(30));
            assertThat(turns.runSince("second-token")).as("granted right after a hold here: the run goes on")
                    .isEqualTo(runSince);
            turns.released(key, "second-token");
            assertThat(tryOnce(third)).isNull();
            third.busy(null, Duration.ofSeconds(1));
            long refused = System.nanoTime();
            assertThat(tryOnce(third)).isNull();
            third.granted("third-token", Duration.ofSeconds(30));
            assertThat(turns.runSince("third-token")).as("told the lock is held elsewhere, its grant begins a new run")
                    .isGreaterThanOrEqualTo(refused);
            turns.released(key, "third-token");
        }
    }

    /** @return a head, having asked once, told that the lock is held by the hold {@code token}, granted in {@code gate} */
    private LocalGate.Ticket headWaitingForAHold(LocalGate gate, String token) {
        LocalGate.Ticket holder = enter(gate);
        assertThat(tryOnce(holder)).isNull();
        holder.granted(token, Duration.ofSeconds(30));
        LocalGate.Ticket head = enter(gate);
        assertThat(tryOnce(head)).as("alone in a new line, it asks").isNull();
        head.busy(token, Duration.ofSeconds(30));
        return head;
    }

    /** One hand-off in {@code gate} from the hold {@code releasing} to a new head asleep on its turn, with fence 40 + n. */
    private LocalGate.HandOver handOff(LocalGate gate, String releasing, int n) throws Exception {
        LocalGate.Ticket head = enter(gate);
        assertThat(tryOnce(head)).isNull();
        head.busy(releasing, Duration.ofSeconds(30));
        Thread waiter = new Thread(() -> {
            try {
                head.await(Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "head-" + n);
        waiter.start();
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        LocalGate.HandOver handOver = gate.handOverFrom(key, releasing);
        assertThat(handOver).isNotNull();
        assertThat(gate.handOverEnded(handOver, 40 + n, System.nanoTime())).isTrue();
        waiter.join(TestTimes.millis(5000).toMillis());
        assertThat(waiter.isAlive()).as("the hand-off wakes the head").isFalse();
        assertThat(head.handedGrant()).isInstanceOf(AcquireResult.Granted.class);
        return handOver;
    }

    private static final Condition<AcquireResult.Busy> ASKS = new Condition<>(
            busy -> busy == null, "asks");
    private static final Condition<AcquireResult.Busy> HELD_BACK = new Condition<>(
            busy -> busy != null && busy.retryWithin().compareTo(Duration.ofMillis(LocalGate.YIELD_MS)) <= 0, "held back");

    private LocalGate.Ticket enter() {
        return enter(gate);
    }

    private LocalGate.Ticket enter(LocalGate gate) {
        return gate.enter(key, new Acquisition(new LockKey("gate", "lock"), LockMode.EXCLUSIVE, UUID.randomUUID().toString(), "test",
                Duration.ofSeconds(30)));
    }

    private static AcquireResult.Busy tryOnce(LocalGate.Ticket ticket) {
        try {
            return ticket.busyUnlessTurn();
        } finally {
            ticket.endTry();
        }
    }
}
