package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.SwitchableEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leadership over the lock machinery: one leader at a time among clients, a closing leader steps
 * down at once, terms strictly increase, the leader is visible, and a leader that cannot reach its
 * engine is first in doubt, then revoked, and another is elected with a higher term.
 */
@Timeout(60) // a broken election can deadlock: fail the test instead of hanging the run
class LeadershipTest {
    private final String store = "leaders-" + UUID.randomUUID();
    private final List<Cerberus> clients = new ArrayList<>();

    @AfterEach
    void closeClients() {
        SwitchableEngineProvider.down(store, false);
        clients.forEach(Cerberus::close);
    }

    private Cerberus client(String uri, Duration lease) {
        Cerberus cerberus = Cerberus.builder().engine(uri).defaultLease(lease).build();
        clients.add(cerberus);
        return cerberus;
    }

    /** Records a participant's events, in order. */
    private static final class Events implements LeadershipListener {
        final BlockingQueue<String> seen = new LinkedBlockingQueue<>();

        @Override
        public void elected(Leadership leadership, long term) {
            seen.add("elected " + term);
        }

        @Override
        public void uncertain(Leadership leadership) {
            seen.add("uncertain");
        }

        @Override
        public void confirmed(Leadership leadership) {
            seen.add("confirmed");
        }

        @Override
        public void revoked(Leadership leadership, String reason) {
            seen.add("revoked " + reason);
        }

        String next() throws InterruptedException {
            String event = seen.poll(10, TimeUnit.SECONDS);
            assertThat(event).as("an event within 10 s").isNotNull();
            return event;
        }
    }

    @Test
    void oneLeaderAtATimeAndAClosingLeaderHandsOverAtOnceWithAHigherTerm() throws Exception {
        List<Leadership> participants = new ArrayList<>();
        List<Events> events = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Events seen = new Events();
            events.add(seen);
            participants.add(client("mem:" + store, Duration.ofSeconds(30))
                    .leadership("billing", "participant-" + i)
                    .onChange(seen)
                    .start());
        }
        long lastTerm = -1;
        for (int round = 0; round < 3; round++) {
            Leadership leader = awaitOneLeader(participants);
            int index = participants.indexOf(leader);
            long term = leader.term();
            assertThat(term).as("terms strictly increase").isGreaterThan(lastTerm);
            lastTerm = term;
            assertThat(events.get(index).next()).isEqualTo("elected " + term);
            for (Leadership participant : participants) {
                assertThat(participant.currentLeader()).contains(leader.participantId());
            }
            long closedAt = System.nanoTime();
            leader.close();
            assertThat(events.get(index).next()).startsWith("revoked stepped down");
            assertThat(leader.isLeader()).isFalse();
            participants.remove(leader);
            events.remove(index);
            if (participants.isEmpty()) {
                break;
            }
            awaitOneLeader(participants);
            assertThat(Duration.ofNanos(System.nanoTime() - closedAt))
                    .as("the next leader, elected once the old one stepped down")
                    .isLessThan(Duration.ofSeconds(2));
        }
        Leadership last = participants.isEmpty() ? null : participants.get(0);
        if (last != null) {
            last.close();
        }
        assertThat(client("mem:" + store, Duration.ofSeconds(30))
                        .leadership("billing")
                        .currentLeader())
                .as("nobody leads after every participant closed")
                .isEmpty();
    }

    private static Leadership awaitOneLeader(List<Leadership> participants) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            List<Leadership> leaders =
                    participants.stream().filter(Leadership::isLeader).toList();
            assertThat(leaders).as("leaders at once").hasSizeLessThanOrEqualTo(1);
            if (leaders.size() == 1) {
                return leaders.get(0);
            }
            participants.get(0).awaitLeadership(Duration.ofMillis(20));
        }
        throw new AssertionError("no leader within 10 s among " + participants);
    }

    @Test
    void aLeaderThatCannotReachItsEngineIsInDoubtThenRevokedAndAnotherLeadsWithAHigherTerm() throws Exception {
        Events firstEvents = new Events();
        Leadership first = client("switchable:" + store, Duration.ofMillis(600))
                .leadership("jobs", "first")
                .onChange(firstEvents)
                .start();
        long firstTerm = electedThenLost(first, firstEvents);

        Leadership second = client("switchable:" + store, Duration.ofMillis(600))
                .leadership("jobs", "second")
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!first.isLeader() && !second.isLeader() && System.nanoTime() < deadline) {
            second.awaitLeadership(Duration.ofMillis(50));
        }
        Leadership leader = first.isLeader() ? first : second;
        assertThat(leader.isLeader()).as("someone leads again").isTrue();
        assertThat(leader.term()).as("a new term, higher than the lost one").isGreaterThan(firstTerm);
    }

    /**
     * Waits for {@code participant} (on the switchable engine) to lead, takes the engine down until the lead is in
     * doubt and then lost, and brings it back.
     *
     * @return the term that was lost
     */
    private long electedThenLost(Leadership participant, Events events) throws InterruptedException {
        assertThat(participant.awaitLeadership(Duration.ofSeconds(10))).isTrue();
        long term = participant.term();
        assertThat(events.next()).isEqualTo("elected " + term);

        SwitchableEngineProvider.down(store, true);
        assertThat(events.next()).isEqualTo("uncertain");
        assertThat(participant.isLeader()).as("not a leader while in doubt").isFalse();
        assertThat(events.next()).startsWith("revoked lost:");
        SwitchableEngineProvider.down(store, false);
        return term;
    }

    @Test
    void aLeaderWhoseHoldTheEngineDoubtsAndThenVouchesForIsToldSoAndLeadsOn() throws Exception {
        String uri = "scripted:" + store;
        Events events = new Events();
        Leadership leader = client(uri, Duration.ofSeconds(30))
                .leadership("ledger", "only")
                .onChange(events)
                .start();
        assertThat(leader.awaitLeadership(Duration.ofSeconds(10))).isTrue();
        long term = leader.term();
        assertThat(events.next()).isEqualTo("elected " + term);
        ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.opened(uri);
        String token = engine.lastGranted.token();

        engine.losses().uncertain(token, "scripted: session suspended");
        assertThat(events.next()).isEqualTo("uncertain");
        assertThat(leader.isLeader()).as("not a leader while in doubt").isFalse();
        engine.losses().confirmed(token);
        assertThat(events.next()).isEqualTo("confirmed");
        assertThat(leader.isLeader())
                .as("the leader again, once the engine vouches for its hold")
                .isTrue();
        assertThat(leader.term()).as("the same term: the hold was never lost").isEqualTo(term);
        assertThat(events.seen).as("no revocation, no new election").isEmpty();
    }

    @Test
    void aParticipantThatCannotReachItsEngineKeepsContendingAndLeadsOnceItIsBack() throws Exception {
        Cerberus cerberus = Cerberus.builder()
                .engine("switchable:" + store)
                .connectTimeout(Duration.ofMillis(200))
                .build();
        clients.add(cerberus);
        SwitchableEngineProvider.down(store, true);
        Leadership alone = cerberus.leadership("reports", "alone").start();
        int refusedBefore = SwitchableEngineProvider.refused(store);
        Await.until(
                "asks again and again: a contention gives up after its 200-ms outage budget and a new one starts",
                Duration.ofSeconds(10),
                () -> SwitchableEngineProvider.refused(store) >= refusedBefore + 8);
        assertThat(alone.isLeader()).isFalse();

        SwitchableEngineProvider.down(store, false);
        assertThat(alone.awaitLeadership(Duration.ofSeconds(10)))
                .as("elected once the engine answers, with nobody else contending")
                .isTrue();
    }

    @Test
    void aLeaderThatLostItsHoldContendsAgainByItself() throws Exception {
        Events events = new Events();
        Leadership alone = client("switchable:" + store, Duration.ofMillis(600))
                .leadership("jobs", "alone")
                .onChange(events)
                .start();
        long firstTerm = electedThenLost(alone, events);

        assertThat(alone.awaitLeadership(Duration.ofSeconds(10)))
                .as("the lost leader contends again")
                .isTrue();
        assertThat(alone.term()).isGreaterThan(firstTerm);
        assertThat(events.next()).isEqualTo("elected " + alone.term());
    }

    @Test
    void theCurrentLeaderIsTheLeaderOfThatNameNotOfANameItBegins() throws Exception {
        Cerberus cerberus = client("mem:" + store, Duration.ofSeconds(30));
        Leadership nightly = cerberus.leadership("jobs-nightly", "night-owl").start();
        assertThat(nightly.awaitLeadership(Duration.ofSeconds(10))).isTrue();

        assertThat(cerberus.leadership("jobs").currentLeader()).isEmpty();
        assertThat(cerberus.leadership("jobs-nightly").currentLeader()).contains("night-owl");
    }

    @Test
    void startingTwiceIsOneParticipationAndStartingOnAClosedClientIsRefused() throws Exception {
        Cerberus cerberus = client("mem:" + store, Duration.ofSeconds(30));
        Leadership leadership = cerberus.leadership("payroll", "only");
        assertThat(leadership.start()).isSameAs(leadership);
        assertThat(leadership.start()).as("a second start changes nothing").isSameAs(leadership);
        assertThat(leadership.awaitLeadership(Duration.ofSeconds(10))).isTrue();
        assertThat(leadership.toString()).contains("payroll", "only", "(leader)");

        Leadership late = cerberus.leadership("payroll", "late");
        cerberus.close();
        assertThatThrownBy(late::start).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void badIdsAndUseAfterCloseAreRefusedWithTheRule() throws Exception {
        Cerberus cerberus = client("mem:" + store, Duration.ofSeconds(30));
        assertThatThrownBy(() -> cerberus.leadership("x", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("participant id");
        assertThatThrownBy(() -> cerberus.leadership("x", "a\nb"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control characters");
        Leadership leadership = cerberus.leadership("x");
        assertThat(leadership.participantId()).contains("@").contains("#");
        assertThatThrownBy(leadership::term).isInstanceOf(IllegalStateException.class);
        leadership.close();
        assertThatThrownBy(leadership::start).isInstanceOf(IllegalStateException.class);
        assertThat(leadership.awaitLeadership(Duration.ofSeconds(5))).isFalse();
    }
}
