package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EtcdRequestsTest {
    private final EtcdRequests requests = new EtcdRequests("etcd://test", Duration.ofSeconds(2));

    /** A delete resent after its first copy went slow: the resend finds the key gone, then the first says it deleted it. */
    @Test
    void aConclusiveAnswerOfAnEarlierCopyWinsOverAnInconclusiveOneOfTheResend() {
        List<CompletableFuture<Boolean>> copies = new CopyOnWriteArrayList<>();
        ScheduledExecutorService server = Executors.newSingleThreadScheduledExecutor();
        try {
            boolean deleted = requests.callPreferring("delete", () -> {
                CompletableFuture<Boolean> copy = new CompletableFuture<>();
                copies.add(copy);
                if (copies.size() == 2) {
                    copy.complete(false);
                    server.schedule(() -> copies.get(0).complete(true), 100, TimeUnit.MILLISECONDS);
                }
                return copy;
            }, answer -> answer);
            assertThat(copies).as("the first copy went unanswered past a quarter of the timeout").hasSize(2);
            assertThat(deleted).as("the first copy's answer").isTrue();
        } finally {
            server.shutdownNow();
        }
    }

    @Test
    void anInconclusiveAnswerIsReturnedWhenNoCopyGivesABetterOne() {
        List<CompletableFuture<Boolean>> copies = new CopyOnWriteArrayList<>();
        ScheduledExecutorService server = Executors.newSingleThreadScheduledExecutor();
        try {
            boolean deleted = requests.callPreferring("delete", () -> {
                CompletableFuture<Boolean> copy = new CompletableFuture<>();
                copies.add(copy);
                if (copies.size() == 2) {
                    copy.complete(false);
                    server.schedule(() -> copies.get(0).complete(false), 100, TimeUnit.MILLISECONDS);
                }
                return copy;
            }, answer -> answer);
            assertThat(deleted).isFalse();
        } finally {
            server.shutdownNow();
        }
    }
}
