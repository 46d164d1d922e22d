package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A multi-lease whose members are lost: it says so, tells each listener once (one registered after the loss at
 * once), and its close throws the loss with the other members' losses added to it.
 */
class MultiLeaseLossTest {

    @Test
    void aMultiLeaseWithLostMembersIsInvalidTellsEveryListenerOnceAndItsCloseThrowsEachLoss() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("scripted:multi-" + UUID.randomUUID())
                .defaultLease(Duration.ofMillis(300))
                .build()) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.last;
            MultiLease both = cerberus.multiLock("account:1", "account:2").acquire(Duration.ZERO);
            List<String> early = new CopyOnWriteArrayList<>();
            both.onLost((lease, reason) -> early.add(lease.lockName()));
            engine.renewals = ScriptedEngineProvider.RenewalMode.REFUSE;
            Await.until(
                    "both members lost",
                    Duration.ofSeconds(10),
                    () -> both.leases().stream().noneMatch(Lease::isValid));
            assertThat(both.isValid()).isFalse();
            // the loss is told on the client's event thread
            Await.until("the loss told", Duration.ofSeconds(10), () -> !early.isEmpty());
            CompletableFuture<String> late = new CompletableFuture<>();
            both.onLost((lease, reason) -> late.complete(lease.lockName()));
            assertThat(late.get(5, TimeUnit.SECONDS))
                    .as("a listener registered after the loss is told at once")
                    .startsWith("account:");
            assertThat(early).as("told once, of the first member lost").hasSize(1);
            assertThatThrownBy(both::close)
                    .isInstanceOf(LockLostException.class)
                    .satisfies(thrown -> assertThat(thrown.getSuppressed())
                            .as("the other member's loss")
                            .singleElement()
                            .isInstanceOf(LockLostException.class));
        }
    }
}
