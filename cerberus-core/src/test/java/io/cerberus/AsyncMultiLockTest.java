package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** An async multi-lock that cannot take every member: what it took is given back, whether it timed out or failed. */
class AsyncMultiLockTest {
    private final String store = "multi-" + UUID.randomUUID();

    @Test
    void anAsyncTryWhoseLastMemberStaysBusyEndsEmptyAndGivesBackTheFirst() throws Exception {
        try (Cerberus other = Cerberus.connect("mem:" + store);
                Cerberus cerberus = Cerberus.connect("mem:" + store)) {
            DistributedLock busy = other.lock("account-2");
            busy.lock();

            assertThat(cerberus.multiLock("account-1", "account-2")
                            .tryAcquireAsync(Duration.ofMillis(200))
                            .get(5, TimeUnit.SECONDS))
                    .as("the last member stayed busy for the whole wait")
                    .isEmpty();
            assertThat(other.lock("account-1").isLocked())
                    .as("the first member given back")
                    .isFalse();
            busy.unlock();
        }
    }

    @Test
    void anAsyncMultiLockWhoseMemberMeetsAnEngineErrorFailsWithItAndGivesBackTheFirst() throws Exception {
        try (Cerberus other = Cerberus.connect("scripted:" + store);
                Cerberus cerberus = Cerberus.connect("scripted:" + store)) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.last;
            DistributedLock busy = other.lock("account-2");
            busy.lock();
            CompletableFuture<MultiLease> both =
                    cerberus.multiLock("account-1", "account-2").acquireAsync(Duration.ofSeconds(10));
            Await.until(
                    "the first member taken",
                    Duration.ofSeconds(5),
                    () -> other.lock("account-1").isLocked());

            engine.acquireErrors.set(1); // the second member's next ask
            busy.unlock();

            assertThatThrownBy(() -> both.get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(AssertionError.class);
            assertThat(other.lock("account-1").isLocked())
                    .as("the first member given back")
                    .isFalse();
        }
    }

    @Test
    void anAsyncMultiLockWaitsItsWaitInAllNotItsWaitForEachMember() throws Exception {
        try (Cerberus other = Cerberus.connect("mem:" + store);
                Cerberus cerberus = Cerberus.connect("mem:" + store)) {
            Lease first = other.lock("account-1").acquire(Duration.ofSeconds(30));
            Lease second = other.lock("account-2").acquire(Duration.ofSeconds(30));
            CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(first::close);

            CompletableFuture<Optional<MultiLease>> both =
                    cerberus.multiLock("account-1", "account-2").tryAcquireAsync(Duration.ofSeconds(2));
            assertThat(both.get(3, TimeUnit.SECONDS))
                    .as("the first member freed after a second, the second busy until the two seconds are over")
                    .isEmpty();
            assertThat(other.lock("account-1").isLocked())
                    .as("the first member given back")
                    .isFalse();
            second.close();
        }
    }
}
