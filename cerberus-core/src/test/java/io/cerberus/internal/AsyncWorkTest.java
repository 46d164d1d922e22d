package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The client's async work: steps and timed wakes run on its daemon threads while it is open, on the caller's thread
 * once it is closed, and it keeps no note of an acquisition once it ended, however it ended.
 */
class AsyncWorkTest {

    @Test
    void stepsAndWakesRunOnDaemonThreadsWhileOpenAndOnTheCallersThreadOnceClosed() throws Exception {
        AsyncWork work = new AsyncWork("unit");
        try {
            CompletableFuture<Thread> step = new CompletableFuture<>();
            work.execute(() -> step.complete(Thread.currentThread()));
            assertThat(step.get(5, TimeUnit.SECONDS))
                    .isNotSameAs(Thread.currentThread())
                    .satisfies(thread -> assertThat(thread.isDaemon()).isTrue())
                    .extracting(Thread::getName)
                    .isEqualTo("cerberus-async-unit");

            CompletableFuture<Thread> wake = new CompletableFuture<>();
            assertThat(work.schedule(() -> wake.complete(Thread.currentThread()), 1_000_000))
                    .isNotNull();
            assertThat(wake.get(5, TimeUnit.SECONDS))
                    .satisfies(thread -> assertThat(thread.isDaemon()).isTrue())
                    .extracting(Thread::getName)
                    .isEqualTo("cerberus-async-timer-unit");
            Future<?> later = work.schedule(() -> wake.obtrudeValue(null), TimeUnit.HOURS.toNanos(1));
            assertThat(later.cancel(false))
                    .as("a wake not due yet can be cancelled")
                    .isTrue();
        } finally {
            work.close();
        }

        List<Thread> ranOn = new ArrayList<>();
        work.execute(() -> ranOn.add(Thread.currentThread()));
        assertThat(ranOn).as("a step after close").containsExactly(Thread.currentThread());
        AtomicBoolean woken = new AtomicBoolean();
        assertThat(work.schedule(() -> woken.set(true), TimeUnit.HOURS.toNanos(1)))
                .as("a wake after close runs at once")
                .isNull();
        assertThat(woken).isTrue();
    }

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
            Await.until(
                    "no acquisition registered after a cancel", Duration.ofSeconds(5), () -> async.registered() == 0);
            elsewhere.unlock();

            engine.acquireErrors.set(1);
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(5)).get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(AssertionError.class);
            assertThat(async.registered()).as("after a failure").isZero();
        }
    }
}
