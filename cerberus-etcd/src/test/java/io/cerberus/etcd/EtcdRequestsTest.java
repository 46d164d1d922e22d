package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EtcdRequestsTest {
    private final EtcdRequests requests = new EtcdRequests("etcd://test", Duration.ofSeconds(2));
    private final List<CompletableFuture<Boolean>> copies = new CopyOnWriteArrayList<>();

    /**
     * A delete whose first copy goes unanswered past a quarter of the timeout, so it is sent again;
     * the resend answers "not deleted" at once, the first copy 100 ms later.
     *
     * @return what the call gives back
     */
    private boolean deleteResentWhileTheFirstCopyAnswersLater(boolean firstCopyAnswer) {
        ScheduledExecutorService server = Executors.newSingleThreadScheduledExecutor();
        try {
            return requests.callPreferring(
                    "delete",
                    () -> {
                        CompletableFuture<Boolean> copy = new CompletableFuture<>();
                        copies.add(copy);
                        if (copies.size() == 2) {
                            copy.complete(false);
                            server.schedule(() -> copies.get(0).complete(firstCopyAnswer), 100, TimeUnit.MILLISECONDS);
                        }
                        return copy;
                    },
                    answer -> answer);
        } finally {
            server.shutdownNow();
        }
    }

    @Test
    void aConclusiveAnswerOfAnEarlierCopyWinsOverAnInconclusiveOneOfTheResend() {
        boolean deleted = deleteResentWhileTheFirstCopyAnswersLater(true);
        assertThat(copies)
                .as("the first copy went unanswered past a quarter of the timeout")
                .hasSize(2);
        assertThat(deleted).as("the first copy's answer").isTrue();
    }

    @Test
    void anInconclusiveAnswerIsReturnedWhenNoCopyGivesABetterOne() {
        assertThat(deleteResentWhileTheFirstCopyAnswersLater(false)).isFalse();
        assertThat(copies).hasSize(2);
    }

    @Test
    void noMoreThanTheLimitOfOneClientsRequestsAreOutAtOnceAndTheOthersWaitTheirTurn() throws Exception {
        int callers = EtcdRequests.MAX_IN_FLIGHT * 2 + 20;
        EtcdRequests patient = new EtcdRequests("etcd://test", Duration.ofSeconds(30));
        AtomicInteger out = new AtomicInteger();
        AtomicInteger mostOut = new AtomicInteger();
        ScheduledExecutorService server = Executors.newSingleThreadScheduledExecutor();
        ExecutorService clients = Executors.newFixedThreadPool(callers);
        try {
            List<Future<Boolean>> calls = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                calls.add(clients.submit(() -> patient.call("read", () -> {
                    mostOut.accumulateAndGet(out.incrementAndGet(), Math::max);
                    CompletableFuture<Boolean> reply = new CompletableFuture<>();
                    server.schedule(
                            () -> {
                                out.decrementAndGet();
                                reply.complete(true);
                            },
                            500,
                            TimeUnit.MILLISECONDS);
                    return reply;
                })));
            }
            for (Future<Boolean> call : calls) {
                assertThat(call.get(60, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            clients.shutdownNow();
            server.shutdownNow();
        }
        assertThat(mostOut.get())
                .as("requests out at once")
                .isLessThanOrEqualTo(EtcdRequests.MAX_IN_FLIGHT)
                .isGreaterThan(EtcdRequests.MAX_IN_FLIGHT / 2);
    }

    @Test
    void releasesAndKeepAlivesAreNotHeldBackByAsksThatTakeEveryPermit() throws Exception {
        EtcdRequests busy = new EtcdRequests("etcd://test", Duration.ofSeconds(30));
        ExecutorService clients = Executors.newFixedThreadPool(EtcdRequests.MAX_IN_FLIGHT + 10);
        CompletableFuture<Boolean> never = new CompletableFuture<>();
        CountDownLatch allOut = new CountDownLatch(EtcdRequests.MAX_IN_FLIGHT);
        try {
            for (int i = 0; i < EtcdRequests.MAX_IN_FLIGHT + 10; i++) {
                clients.submit(() -> busy.call("ask", () -> {
                    allOut.countDown();
                    return never;
                }));
            }
            assertThat(allOut.await(10, TimeUnit.SECONDS))
                    .as("every ask permit taken")
                    .isTrue();
            assertThat(busy.callPreferring("release", () -> CompletableFuture.completedFuture(true), reply -> reply))
                    .isTrue();
            assertThat(busy.callKeeping("keep alive", () -> CompletableFuture.completedFuture(true)))
                    .isTrue();
        } finally {
            never.complete(false);
            clients.shutdownNow();
        }
    }
}
