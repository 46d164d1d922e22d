package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;

/**
 * A bad value in {@link WithDistributedLock @WithDistributedLock} or {@link Idempotent @Idempotent} fails
 * the application's start, naming the annotation, the attribute, the method and the rule, instead
 * of the method's first call.
 */
class AnnotationCheckAtStartTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CerberusAutoConfiguration.class, AopAutoConfiguration.class))
            .withPropertyValues("cerberus.engines=mem:");

    static class NotADuration {
        @WithDistributedLock(key = "'a'", waitTime = "5 parsecs")
        public void run() {}
    }

    static class ZeroLease {
        @WithDistributedLock(key = "'a'", leaseTime = "0s")
        public void run() {}
    }

    static class UnparsableKey {
        @WithDistributedLock(key = "'order:' +")
        public void run(long orderId) {}
    }

    static class EmptyKey {
        @Idempotent(key = " ")
        public String run() {
            return "ran";
        }
    }

    static class ReturnsAFuture {
        @WithDistributedLock(key = "'later'")
        public Future<String> later() {
            return CompletableFuture.completedFuture("ran");
        }
    }

    static class StoresAStream {
        @Idempotent(key = "#id")
        public Flux<String> all(String id) {
            return Flux.just(id);
        }
    }

    static class ZeroRetention {
        @Idempotent(key = "#id", retention = "0")
        public String run(String id) {
            return id;
        }
    }

    static class WaitWithoutWaiting {
        @Idempotent(key = "#id", onInProgress = Idempotent.InProgress.REJECT, waitTime = "5s")
        public String run(String id) {
            return id;
        }
    }

    static class Fine {
        @WithDistributedLock(key = "'order:' + #orderId", waitTime = "5s", leaseTime = "30s")
        public void lock(long orderId) {}

        @Idempotent(key = "#id", retention = "12h", onInProgress = Idempotent.InProgress.WAIT, waitTime = "2s")
        public String once(String id) {
            return id;
        }
    }

    @Test
    void aBadDurationFailsTheStart() {
        assertFailsTheStart(
                NotADuration.class,
                "@WithDistributedLock(waitTime = \"5 parsecs\") on NotADuration.run(..) is not a duration");
        assertFailsTheStart(
                ZeroLease.class, "@WithDistributedLock(leaseTime = \"0s\") on ZeroLease.run(..) must be positive");
        assertFailsTheStart(
                ZeroRetention.class,
                "@Idempotent(retention = \"0\") on ZeroRetention.run(..) must be a positive duration");
        assertFailsTheStart(
                WaitWithoutWaiting.class,
                "@Idempotent(waitTime = \"5s\") on WaitWithoutWaiting.run(..) needs onInProgress = WAIT");
    }

    @Test
    void aKeyThatDoesNotParseFailsTheStart() {
        assertFailsTheStart(
                UnparsableKey.class,
                "@WithDistributedLock(key = \"'order:' +\") on UnparsableKey.run(..) does not parse");
        assertFailsTheStart(EmptyKey.class, "@Idempotent(key = \" \") on EmptyKey.run(..): the key must not be empty");
    }

    @Test
    void aMethodThatReturnsAFutureTheAspectCannotFollowFailsTheStart() {
        assertFailsTheStart(
                ReturnsAFuture.class,
                "@WithDistributedLock on ReturnsAFuture.later(..) is not supported: it returns Future");
    }

    @Test
    void anIdempotentFluxFailsTheStart() {
        assertFailsTheStart(
                StoresAStream.class,
                "@Idempotent on StoresAStream.all(..) is not supported: it returns Flux, a stream, which is not stored");
    }

    @Test
    void goodAnnotationsStart() {
        runner.withBean(Fine.class).run(context -> {
            assertThat(context).hasNotFailed();
            context.getBean(Fine.class).lock(7);
            assertThat(context.getBean(Fine.class).once("x")).isEqualTo("x");
        });
    }

    private void assertFailsTheStart(Class<?> bean, String message) {
        runner.withBean(bean).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining(message);
        });
    }
}
