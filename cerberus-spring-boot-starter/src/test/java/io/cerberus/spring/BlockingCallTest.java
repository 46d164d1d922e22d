package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/** The reactive filters' blocking calls: off the caller's thread, and never an interrupt for what follows. */
class BlockingCallTest {

    @Test
    void theCallRunsOnTheBoundedElasticSchedulerAndItsValueOrFailureComesBack() {
        assertThat(BlockingCall.of(() -> Thread.currentThread().getName()).block(Duration.ofSeconds(5)))
                .startsWith("boundedElastic");
        assertThat(BlockingCall.of(() -> null).blockOptional(Duration.ofSeconds(5)))
                .isEmpty();
        assertThatThrownBy(() -> BlockingCall.of(() -> {
                            throw new IllegalStateException("refused");
                        })
                        .block(Duration.ofSeconds(5)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("refused");
    }

    /**
     * What follows a call that fails at once (the filters write their answer there) runs on a thread nobody
     * interrupts: with {@code Mono.fromCallable(call).subscribeOn(boundedElastic())} a few in a thousand were
     * interrupted, and Tomcat then closes the connection without the answer.
     */
    @Test
    void whatFollowsACallThatFailsAtOnceIsNeverInterrupted() {
        assertThat(interruptedAfterFailures(BlockingCall::of)).isZero();
    }

    @Test
    void aCancelledMonoLetsTheCallRunToItsEndUninterrupted() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        CountDownLatch ended = new CountDownLatch(1);
        BlockingCall.of(() -> {
                    entered.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                    }
                    ended.countDown();
                    return "done";
                })
                .subscribe()
                .dispose();
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        release.countDown();

        assertThat(ended.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(interrupted).isFalse();
    }

    @Test
    void aValueThatComesAfterTheCancelGoesToTheDiscardHook() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> discarded = new CompletableFuture<>();
        Disposable subscription = BlockingCall.of(() -> {
                    entered.countDown();
                    release.await();
                    return "claimed";
                })
                .doOnDiscard(String.class, discarded::complete)
                .subscribe();
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        subscription.dispose();
        release.countDown();

        assertThat(discarded.get(5, TimeUnit.SECONDS)).isEqualTo("claimed");
    }

    /** @return how many of 2,000 continuations after a failed call found their thread interrupted */
    static int interruptedAfterFailures(Function<Callable<Object>, Mono<Object>> blocking) {
        int interrupted = 0;
        for (int i = 0; i < 2_000; i++) {
            Boolean seen = blocking.apply(() -> {
                        throw new IllegalStateException("refused");
                    })
                    .map(value -> false)
                    .onErrorResume(
                            IllegalStateException.class,
                            e -> Mono.fromSupplier(() -> {
                                long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(200);
                                while (System.nanoTime() < until) {
                                    Thread.onSpinWait();
                                }
                                return Thread.interrupted();
                            }))
                    .block(Duration.ofSeconds(5));
            if (Boolean.TRUE.equals(seen)) {
                interrupted++;
            }
        }
        return interrupted;
    }
}
