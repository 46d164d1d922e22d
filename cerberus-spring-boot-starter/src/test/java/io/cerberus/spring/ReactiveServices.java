package io.cerberus.spring;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The small application of the reactive annotation tests: methods that return Mono, Flux or a future. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ReactiveServices.Rooms.class, ReactiveServices.Charges.class})
class ReactiveServices {

    /** Methods under {@link WithDistributedLock}; each counts the calls inside its lock at once. */
    static class Rooms {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger mostInside = new AtomicInteger();

        /** @return the most calls inside one room at once (a method: callers hold a proxy) */
        public AtomicInteger mostInside() {
            return mostInside;
        }

        /** Holds the room for {@code holdFor}, then gives "held"; {@code entered} is counted down under the lock. */
        @WithDistributedLock(key = "'room:' + #room", waitTime = "10s")
        public Mono<String> hold(String room, Duration holdFor, CountDownLatch entered) {
            return Mono.fromRunnable(() -> enter(entered))
                    .then(Mono.delay(holdFor))
                    .thenReturn("held")
                    .doFinally(signal -> inside.decrementAndGet());
        }

        @WithDistributedLock(key = "'room:' + #room", waitTime = "100ms")
        public Mono<String> tryBriefly(String room) {
            return Mono.just("got " + room);
        }

        @WithDistributedLock(key = "'room:' + #room", waitTime = "10s")
        public Mono<String> waitFor(String room) {
            return Mono.just("got " + room);
        }

        /** Holds the room until the caller completes {@code done}. */
        @WithDistributedLock(key = "'room:' + #room", waitTime = "10s")
        public CompletableFuture<String> holdUntil(
                String room, CompletableFuture<String> done, CountDownLatch entered) {
            enter(entered);
            done.whenComplete((value, failure) -> inside.decrementAndGet());
            return done;
        }

        @WithDistributedLock(key = "'room:' + #room", waitTime = "100ms")
        public CompletableFuture<String> tryBrieflyLater(String room) {
            return CompletableFuture.completedFuture("got " + room);
        }

        /** Streams what the caller emits, under the lock until the stream completes. */
        @WithDistributedLock(key = "'room:' + #room", waitTime = "10s")
        public Flux<String> stream(String room, Flux<String> elements, CountDownLatch entered) {
            return Flux.defer(() -> {
                enter(entered);
                return elements;
            });
        }

        private void enter(CountDownLatch entered) {
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            entered.countDown();
        }
    }

    /** Methods under {@link Idempotent}; each counts its runs. */
    static class Charges {
        final AtomicInteger runs = new AtomicInteger();

        /** @return how often a method ran (a method: callers hold a proxy) */
        public AtomicInteger runs() {
            return runs;
        }

        record Receipt(String id, int run) {}

        @Idempotent(key = "#id")
        public Mono<Receipt> charge(String id) {
            return Mono.fromSupplier(() -> new Receipt(id, runs.incrementAndGet()));
        }

        @Idempotent(key = "#id")
        public Mono<Void> notify(String id) {
            return Mono.fromRunnable(runs::incrementAndGet);
        }

        @Idempotent(key = "#id")
        public CompletableFuture<Receipt> chargeLater(String id) {
            return CompletableFuture.supplyAsync(() -> new Receipt(id, runs.incrementAndGet()));
        }
    }
}
