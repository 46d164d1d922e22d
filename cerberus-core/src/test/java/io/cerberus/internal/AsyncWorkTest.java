package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.local.ScriptedEngineProvider;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The client's async work keeps no note of an acquisition once it ended, however it ended. */
class AsyncWorkTest {

    @Test
    void noAcquisitionStaysRegisteredOnceGrantedTimedOutFailedOrCancelled() throws Exception {
        String store = UUID.randomUUID().toString();
        try (Cerberus other = Cerberus.connect("scripted:" + store);
                Cerberus cerberus = Cerberus.connect("scripted:" + store)) {
            ScriptedEngineProvider.Scripted engine = ScriptedEngineProvider.last;
            AsyncWork async = ((CerberusClient) cerberus).acquirer.async;
            DistributedLock lock = cerberus.lock("noted");

            Lease granted = lock.acquireAsync(Duration.ofSeconds(5)).get(5, TimeUnit.SECONDS);
            assertThat(async.registered()).as("after a grant").isZero();
            granted.close();

            DistributedLock elsewhere = other.lock("noted");
            elsewhere.lock();
            assertThat(lock.tryAcquireAsync(Duration.ofMillis(50)).get(5, TimeUnit.SECONDS))
                    .isEmpty();
            assertThat(async.registered()).as("after a timeout").isZero();

            CompletableFuture<Optional<Lease>> waiting = lock.tryAcquireAsync(Duration.ofSeconds(30));
            assertThat(async.registered()).isEqualTo(1);
            waiting.cancel(false);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (async.registered() > 0 && System.nanoTime() - deadline < 0) {
                Thread.sleep(5);
            }
            assertThat(async.registered()).as("after a cancel").isZero();
            elsewhere.unlock();

            engine.acquireErrors.set(1);
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(5)).get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(AssertionError.class);
            assertThat(async.registered()).as("after a failure").isZero();
        }
    }
}
