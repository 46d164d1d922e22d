package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.ScriptedEngineProvider.Scripted;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A hold's states and what its holder and listeners are told: {@link Holding}, through a client of a scripted engine. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HoldingTest {
    private static final double SCALE = Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1"));
    /** Long enough that no renewal comes during a test, unless it says otherwise. */
    private static final Duration LONG = Duration.ofSeconds(30);

    private final List<Cerberus> clients = new ArrayList<>();
    private final String store = UUID.randomUUID().toString();

    private Scripted engine;

    private Cerberus client(Duration lease) throws InterruptedException {
        Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + store)
                .defaultLease(lease)
                .build();
        clients.add(cerberus);
        Lease opening = cerberus.lock("open-the-engine").acquire(Duration.ZERO);
        opening.close();
        engine = ScriptedEngineProvider.last;
        return cerberus;
    }

    private static long bound(long millis) {
        return (long) (millis * SCALE);
    }

    @AfterEach
    void close() {
        clients.forEach(Cerberus::close);
    }

    @Test
    void aHoldTheEngineDoubtsIsInvalidUntilTheEngineVouchesForItAgain() throws Exception {
        Lease lease = client(LONG).lock("doubted").acquire(Duration.ZERO);
        String token = engine.lastGranted.token();

        engine.losses().uncertain(token, "scripted: session suspended");
        assertThat(lease.isValid()).as("while the engine doubts it").isFalse();
        engine.losses().confirmed(token);
        assertThat(lease.isValid()).as("once the engine vouches for it again").isTrue();
        lease.close();
    }

    @Test
    void aLossTheEngineReportsIsToldOnceWithItsReasonAndFencingTokenAndLeavesTheHoldFreeToUnlock() throws Exception {
        DistributedLock lock = client(LONG).lock("reported");
        lock.lock();
        String token = engine.lastGranted.token();
        long fence = lock.lease().fencingToken();
        AtomicInteger told = new AtomicInteger();
        CountDownLatch toldOnce = new CountDownLatch(1);
        lock.lease().onLost((lease, reason) -> {
            told.incrementAndGet();
            toldOnce.countDown();
        });
        // reported from an engine's own thread, as engines do; the thread ends before the holder unlocks
        Thread events = new Thread(() -> engine.losses().lost(token, "scripted: session expired"), "engine events");
        events.start();
        events.join();

        assertThat(toldOnce.await(bound(2000), TimeUnit.MILLISECONDS))
                .as("the listener told")
                .isTrue();
        assertThat(lock.lease().isValid()).isFalse();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("lock 'reported' (fencing token " + fence + ")")
                .hasMessageContaining("was lost: scripted: session expired");
        assertThat(told.get()).as("told once").isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void aListenerAddedAfterTheLossIsToldAtOnce() throws Exception {
        Lease lease = client(LONG).lock("late-listener").acquire(Duration.ZERO);
        engine.losses().lost(engine.lastGranted.token(), "scripted: session expired");
        CountDownLatch told = new CountDownLatch(1);

        lease.onLost((held, reason) -> told.countDown());
        assertThat(told.await(bound(2000), TimeUnit.MILLISECONDS)).isTrue();
        assertThatThrownBy(lease::close).isInstanceOf(LockLostException.class);
    }

    @Test
    void aHoldLostBeforeItsGrantWasAnsweredIsNeverRenewed() throws Exception {
        Duration lease = Duration.ofMillis(300);
        Cerberus cerberus = client(lease);
        engine.lostBeforeAnswered = true;
        Lease lost = cerberus.lock("lost-at-once").acquire(Duration.ZERO);
        new CountDownLatch(1).await(lease.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS); // two renewal periods

        assertThat(engine.renewCalls.get())
                .as("renewals sent for a hold the engine had already reported lost")
                .isZero();
        assertThatThrownBy(lost::close).isInstanceOf(LockLostException.class);
    }

    @Test
    void aReenteredHoldIsStillRenewed() throws Exception {
        Duration lease = Duration.ofMillis(300);
        DistributedLock lock = client(lease).lock("reentered");
        lock.lock();
        lock.lock(); // checks the hold is not lost, and must leave it to the renewer
        new CountDownLatch(1).await(lease.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS); // three lease periods

        assertThat(lock.lease().isValid()).as("renewed while held twice").isTrue();
        lock.unlock();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void aReleaseTheEngineDidNotGetSaysSoAndALostHoldsSaysItWasLost() throws Exception {
        Cerberus cerberus = client(LONG);
        Lease held = cerberus.lock("unreleased").acquire(Duration.ZERO);
        engine.releaseFailures.set(1);
        assertThatThrownBy(held::close)
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("could not release lock 'unreleased'")
                .hasMessageContaining("it is no longer renewed and the engine frees it when its lease of 30s ends");

        Lease lost = cerberus.lock("lost-then-unreleased").acquire(Duration.ZERO);
        engine.losses().lost(engine.lastGranted.token(), "scripted: session expired");
        engine.releaseFailures.set(1);
        assertThatThrownBy(lost::close)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("was lost: scripted: session expired");
    }

    @Test
    void aHoldTheEngineNoLongerHadAtReleaseIsReportedLostToItsListeners() throws Exception {
        DistributedLock lock = client(LONG).lock("taken-away");
        lock.lock();
        CountDownLatch told = new CountDownLatch(1);
        lock.lease().onLost((lease, reason) -> told.countDown());
        engine.dropInStore(engine.lastGranted); // the client is not told

        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("the engine no longer had it at release");
        assertThat(told.await(bound(2000), TimeUnit.MILLISECONDS))
                .as("its listener told too")
                .isTrue();
    }

    @Test
    void aLeaseHandleReleasesAsynchronouslyAndAThreadsHoldRefusesTo() throws Exception {
        Cerberus cerberus = client(LONG);
        Lease lease = cerberus.lock("async").acquire(Duration.ZERO);
        lease.releaseAsync().get(bound(2000), TimeUnit.MILLISECONDS);
        assertThat(lease.isValid()).isFalse();
        assertThat(cerberus.lock("async").acquire(Duration.ZERO).isValid())
                .as("free again")
                .isTrue();

        DistributedLock lock = cerberus.lock("thread-bound");
        lock.lock();
        assertThatThrownBy(() -> lock.lease().releaseAsync().get(bound(2000), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("release it with unlock()");
        assertThat(lock.lease().isValid()).as("still held").isTrue();
        lock.unlock();
    }

    @Test
    void aHoldOnAnEngineWithoutSessionsEndsWhenItsLeaseDoesIfItsHolderFallsSilent() throws Exception {
        Lease lease = client(LONG).lock("silent").acquire(Duration.ZERO, Duration.ofSeconds(7));
        assertThat(lease.silentHolderExpiry()).isEqualTo(Optional.of(Duration.ofSeconds(7)));
        lease.close();
    }
}
