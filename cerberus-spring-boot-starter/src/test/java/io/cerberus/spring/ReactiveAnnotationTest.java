package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.spring.ReactiveServices.Charges;
import io.cerberus.spring.ReactiveServices.Charges.Receipt;
import io.cerberus.spring.ReactiveServices.Rooms;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

/**
 * {@link WithDistributedLock} and {@link Idempotent} on methods that return Mono, Flux and
 * CompletableFuture, in a WebFlux application over the {@code mem:} engine: the lock is taken at
 * subscription (at the call for a future), held for the publisher's life, released on complete and
 * cancel; a busy lock gives the blocking path's exception; a result is stored once.
 */
@SpringBootTest(
        classes = ReactiveServices.class,
        properties = {"cerberus.engines=mem:", "spring.main.web-application-type=reactive"})
class ReactiveAnnotationTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    @Autowired
    Rooms rooms;

    @Autowired
    Charges charges;

    @BeforeEach
    void reset() {
        rooms.mostInside().set(0);
        charges.runs().set(0);
    }

    private static String room() {
        return UUID.randomUUID().toString();
    }

    private static Duration bound(long millis) {
        return TestTimes.millis(millis);
    }

    @Test
    void aMonoTakesItsLockWhenSubscribedNotWhenCalled() {
        String room = room();
        CountDownLatch entered = new CountDownLatch(1);
        var held = rooms.hold(room, Duration.ofMillis(1), entered);

        assertThat(rooms.tryBriefly(room).block(bound(5_000))).isEqualTo("got " + room);
        assertThat(entered.getCount()).as("nothing ran before the subscription").isEqualTo(1);
        assertThat(held.block(bound(5_000))).isEqualTo("held");
        assertThat(entered.getCount()).isZero();
    }

    @Test
    void aMonoKeepsOthersOutForItsSubscriptionsLifeAndTheBusyCallerGetsLockNotAcquired() throws Exception {
        String room = room();
        CountDownLatch entered = new CountDownLatch(1);
        Disposable holding = rooms.hold(room, LONG, entered).subscribe();
        try {
            assertThat(entered.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();

            assertThatThrownBy(() -> rooms.tryBriefly(room).block(bound(5_000)))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("lock 'room:" + room + "' is busy")
                    .hasMessageContaining("within its waitTime of 100ms");
        } finally {
            holding.dispose();
        }
    }

    @Test
    void cancellingTheSubscriptionReleasesTheLockAtOnce() throws Exception {
        String room = room();
        CountDownLatch entered = new CountDownLatch(1);
        Disposable holding = rooms.hold(room, LONG, entered).subscribe();
        assertThat(entered.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        long start = System.nanoTime();

        holding.dispose();

        assertThat(rooms.waitFor(room).block(bound(5_000))).isEqualTo("got " + room);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("the next caller got the lock long before the cancelled hold (30 s) would have ended")
                .isLessThan(bound(3_000));
    }

    @Test
    void aWaitingSubscriberHoldsNoThreadAndRunsWhenTheHolderCompletes() throws Exception {
        String room = room();
        CountDownLatch firstIn = new CountDownLatch(1);
        CountDownLatch secondIn = new CountDownLatch(1);
        Sinks.One<String> firstDone = Sinks.one();
        rooms.hold(room, Duration.ofMillis(300), firstIn).subscribe(firstDone::tryEmitValue, firstDone::tryEmitError);
        assertThat(firstIn.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();

        long start = System.nanoTime();
        Disposable second = rooms.hold(room, Duration.ofMillis(1), secondIn).subscribe();
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("subscribing returns at once: the wait holds no thread")
                .isLessThan(bound(250));

        assertThat(secondIn.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(firstDone.asMono().block(bound(1_000))).isEqualTo("held");
        assertThat(rooms.mostInside().get()).as("never two inside one room").isEqualTo(1);
        second.dispose();
    }

    @Test
    void aCompletableFutureHoldsTheLockUntilItCompletes() throws Exception {
        String room = room();
        CountDownLatch entered = new CountDownLatch(1);
        CompletableFuture<String> done = new CompletableFuture<>();
        CompletableFuture<String> held = rooms.holdUntil(room, done, entered);
        assertThat(entered.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();

        assertThatThrownBy(() -> rooms.tryBrieflyLater(room).get(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("within its waitTime of 100ms");

        done.complete("finished");
        assertThat(held.get(bound(5_000).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("finished");
        assertThat(rooms.tryBrieflyLater(room).get(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isEqualTo("got " + room);
    }

    @Test
    void cancellingACompletableFutureReleasesTheLock() throws Exception {
        String room = room();
        CountDownLatch entered = new CountDownLatch(1);
        CompletableFuture<String> done = new CompletableFuture<>();
        CompletableFuture<String> held = rooms.holdUntil(room, done, entered);
        assertThat(entered.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();

        held.cancel(false);

        // the aspect links the two futures when the method returns, on its own thread: poll for it
        long deadline = System.nanoTime() + bound(5_000).toNanos();
        while (!done.isCancelled() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(done).as("the method's own future is cancelled with it").isCancelled();
        assertThat(rooms.waitFor(room).block(bound(5_000))).isEqualTo("got " + room);
    }

    @Test
    void aFluxHoldsTheLockUntilItCompletes() throws Exception {
        String room = room();
        CountDownLatch entered = new CountDownLatch(1);
        Sinks.Many<String> elements = Sinks.many().unicast().onBackpressureBuffer();
        Sinks.One<Long> count = Sinks.one();
        rooms.stream(room, elements.asFlux(), entered).count().subscribe(count::tryEmitValue, count::tryEmitError);
        assertThat(entered.await(bound(5_000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        elements.tryEmitNext("first");

        assertThatThrownBy(() -> rooms.tryBriefly(room).block(bound(5_000)))
                .as("held after an element, before the end")
                .isInstanceOf(LockNotAcquiredException.class);

        elements.tryEmitNext("second");
        elements.tryEmitComplete();
        assertThat(count.asMono().block(bound(5_000))).isEqualTo(2);
        assertThat(rooms.waitFor(room).block(bound(5_000))).isEqualTo("got " + room);
    }

    @Test
    void anIdempotentMonoRunsOnceAtSubscriptionAndReplaysItsElement() {
        String id = UUID.randomUUID().toString();
        var first = charges.charge(id);
        assertThat(charges.runs().get())
                .as("nothing ran before the subscription")
                .isZero();

        Receipt ran = first.block(bound(5_000));
        Receipt replayed = charges.charge(id).block(bound(5_000));

        assertThat(ran).isEqualTo(new Receipt(id, 1));
        assertThat(replayed).isEqualTo(ran);
        assertThat(charges.runs().get()).isEqualTo(1);
    }

    @Test
    void anEmptyIdempotentMonoIsStoredAsEmpty() {
        String id = UUID.randomUUID().toString();
        assertThat(charges.notify(id).block(bound(5_000))).isNull();
        assertThat(charges.notify(id).block(bound(5_000))).isNull();
        assertThat(charges.runs().get()).isEqualTo(1);
    }

    @Test
    void anIdempotentCompletableFutureRunsOnceAndReplaysItsValue() throws Exception {
        String id = UUID.randomUUID().toString();
        Receipt ran = charges.chargeLater(id).get(bound(5_000).toMillis(), TimeUnit.MILLISECONDS);
        Receipt replayed = charges.chargeLater(id).get(bound(5_000).toMillis(), TimeUnit.MILLISECONDS);

        assertThat(replayed).isEqualTo(ran).isEqualTo(new Receipt(id, 1));
        assertThat(charges.runs().get()).isEqualTo(1);
    }
}
