package io.cerberus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.OperationInProgressException;
import io.cerberus.spring.AnnotatedServices.ChargeRequest;
import io.cerberus.spring.AnnotatedServices.Orders;
import io.cerberus.spring.AnnotatedServices.Payments;
import io.cerberus.spring.AnnotatedServices.Receipt;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * {@link WithDistributedLock} and {@link Idempotent} on a real engine of this JVM; subclasses say which.
 * Every test uses keys of its own, as the application context (and its engine) is shared.
 */
abstract class AbstractAnnotationTest {
    private static long nextOrder = System.nanoTime() & 0xffff_ffffL;

    @Autowired
    Orders orders;

    @Autowired
    Payments payments;

    @Autowired
    Cerberus cerberus;

    private final ExecutorService callers = Executors.newCachedThreadPool();

    @AfterEach
    void stopCallers() throws InterruptedException {
        callers.shutdownNow();
        assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private static synchronized long newOrder() {
        return ++nextOrder;
    }

    @Test
    void twoCallsWithTheSameKeyRunOneAfterTheOther() throws Exception {
        long order = newOrder();
        Gate first = new Gate();
        Gate second = new Gate();
        orders.mostInside().set(0);
        CompletableFuture<Void> firstCall = CompletableFuture.runAsync(() -> orders.hold(order, first), callers);
        assertThat(first.awaitEntered(5_000)).isTrue();
        CompletableFuture<Void> secondCall = CompletableFuture.runAsync(() -> orders.hold(order, second), callers);

        assertThat(second.awaitEntered(300))
                .as("the second call must wait for the lock")
                .isFalse();
        first.open();
        assertThat(second.awaitEntered(5_000))
                .as("the second call runs once the first released the lock")
                .isTrue();
        second.open();
        firstCall.get(5, TimeUnit.SECONDS);
        secondCall.get(5, TimeUnit.SECONDS);
        assertThat(orders.mostInside().get()).isEqualTo(1);
    }

    @Test
    void callsWithDifferentKeysRunTogether() throws Exception {
        Gate first = new Gate();
        Gate second = new Gate();
        CompletableFuture<Void> firstCall = CompletableFuture.runAsync(() -> orders.hold(newOrder(), first), callers);
        assertThat(first.awaitEntered(5_000)).isTrue();
        CompletableFuture<Void> secondCall = CompletableFuture.runAsync(() -> orders.hold(newOrder(), second), callers);

        assertThat(second.awaitEntered(5_000))
                .as("another key's lock is free while the first call runs")
                .isTrue();
        first.open();
        second.open();
        firstCall.get(5, TimeUnit.SECONDS);
        secondCall.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aLockBusyPastTheWaitFailsTheCallWithoutRunningIt() throws Exception {
        long order = newOrder();
        Gate holder = new Gate();
        CompletableFuture<Void> holding = CompletableFuture.runAsync(() -> orders.hold(order, holder), callers);
        assertThat(holder.awaitEntered(5_000)).isTrue();
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> orders.tryBriefly(order))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("'order:" + order + "'")
                    .hasMessageContaining("100ms")
                    .hasMessageContaining("Orders.tryBriefly")
                    .satisfies(e -> assertThat(((LockNotAcquiredException) e).lockName())
                            .isEqualTo("order:" + order));
            assertThat(System.nanoTime() - start)
                    .as("waited its wait time")
                    .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
            assertThatThrownBy(() -> orders.tryOnce(order))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("at once");
        } finally {
            holder.open();
        }
        holding.get(5, TimeUnit.SECONDS);
        assertThat(orders.tryOnce(order)).isEqualTo("ran");
    }

    @Test
    void aMethodThatThrowsReleasesItsLock() throws Exception {
        String job = "nightly-" + newOrder();
        assertThatThrownBy(() -> orders.fail(job))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("failed");

        assertThat(cerberus.lock("job:" + job).isLocked()).isFalse();
        assertThat(CompletableFuture.supplyAsync(
                                () -> cerberus.lock("job:" + job).tryLock(), callers)
                        .get(5, TimeUnit.SECONDS))
                .isTrue();
    }

    @Test
    void aKeyThatCannotBeEvaluatedNamesTheExpressionAndTheMethod() {
        assertThatThrownBy(() -> orders.badKey(1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("@WithDistributedLock(key = \"#order.id\")")
                .hasMessageContaining("Orders.badKey(..)");
    }

    @Test
    void anIdempotentMethodRunsOnceAndItsRecordIsReplayedToADuplicate() {
        String id = UUID.randomUUID().toString();
        int before = payments.runs().get();

        Receipt first = payments.charge(new ChargeRequest(id, 1250));
        Receipt duplicate = payments.charge(new ChargeRequest(id, 1250));

        assertThat(duplicate).isEqualTo(first).isEqualTo(new Receipt(id, 1250, first.run()));
        assertThat(payments.runs().get() - before).isEqualTo(1);
        assertThat(payments.charge(new ChargeRequest(UUID.randomUUID().toString(), 1250))
                        .run())
                .isNotEqualTo(first.run());
    }

    @Test
    void aGenericResultIsReplayedWithItsElementType() {
        List<String> ids =
                List.of(UUID.randomUUID().toString(), UUID.randomUUID().toString());
        List<Receipt> first = payments.chargeAll(ids);
        List<Receipt> duplicate = payments.chargeAll(ids);

        assertThat(duplicate)
                .isEqualTo(first)
                .allSatisfy(receipt -> assertThat(receipt).isInstanceOf(Receipt.class));
    }

    @Test
    void aVoidMethodRunsOnce() {
        String id = UUID.randomUUID().toString();
        int before = payments.runs().get();
        payments.notifyShipped(id);
        payments.notifyShipped(id);
        assertThat(payments.runs().get() - before).isEqualTo(1);
    }

    @Test
    void aFailedCallReleasesItsKeySoARetryRuns() {
        String id = UUID.randomUUID().toString();
        int before = payments.runs().get();
        payments.declineNext().set(true);
        assertThatThrownBy(() -> payments.charge(new ChargeRequest(id, 500))).hasMessage("card declined");

        Receipt retried = payments.charge(new ChargeRequest(id, 500));
        assertThat(payments.runs().get() - before).isEqualTo(2);
        assertThat(payments.charge(new ChargeRequest(id, 500))).isEqualTo(retried);
    }

    @Test
    void aDuplicateWhileTheFirstCallRunsIsRejected() throws Exception {
        String id = UUID.randomUUID().toString();
        Gate first = new Gate();
        CompletableFuture<String> firstCall =
                CompletableFuture.supplyAsync(() -> payments.slowRejecting(id, first), callers);
        assertThat(first.awaitEntered(5_000)).isTrue();
        Gate second = new Gate();
        try {
            assertThatThrownBy(() -> payments.slowRejecting(id, second))
                    .isInstanceOf(OperationInProgressException.class);
            assertThat(second.wasEntered()).isFalse();
        } finally {
            first.open();
        }
        String result = firstCall.get(5, TimeUnit.SECONDS);
        assertThat(payments.slowRejecting(id, second)).isEqualTo(result);
    }

    @Test
    void aWaitingDuplicateGetsTheFirstCallsResult() throws Exception {
        String id = UUID.randomUUID().toString();
        Gate first = new Gate();
        CompletableFuture<String> firstCall =
                CompletableFuture.supplyAsync(() -> payments.slowWaiting(id, first), callers);
        assertThat(first.awaitEntered(5_000)).isTrue();
        Gate second = new Gate();
        CompletableFuture<String> duplicate =
                CompletableFuture.supplyAsync(() -> payments.slowWaiting(id, second), callers);
        assertThatThrownBy(() -> duplicate.get(300, TimeUnit.MILLISECONDS))
                .as("the duplicate waits while the first call runs")
                .isInstanceOf(java.util.concurrent.TimeoutException.class);

        first.open();
        assertThat(duplicate.get(10, TimeUnit.SECONDS)).isEqualTo(firstCall.get(5, TimeUnit.SECONDS));
        assertThat(second.wasEntered()).isFalse();
    }
}
