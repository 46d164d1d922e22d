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
}
