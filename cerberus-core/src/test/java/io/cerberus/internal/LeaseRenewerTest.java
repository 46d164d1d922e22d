package io.cerberus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.ScriptedEngineProvider.RenewalMode;
import io.cerberus.local.ScriptedEngineProvider.Scripted;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LeaseRenewerTest {
    private static final double SCALE = Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1"));
    private static final Duration LEASE = Duration.ofMillis(300);

    private final List<Cerberus> clients = new ArrayList<>();

    private Cerberus client() {
        return client(LEASE);
    }

    private Cerberus client(Duration lease) {
        Cerberus cerberus = Cerberus.builder()
                .engine("scripted:" + UUID.randomUUID())
                .defaultLease(lease)
                .build();
        clients.add(cerberus);
        return cerberus;
    }

    private static long bound(long millis) {
        return (long) (millis * SCALE);
    }

    @AfterEach
    void close() {
        clients.forEach(Cerberus::close);
    }

    /** An engine may report a grant lost before its answer reaches the core: the hold must start lost, not valid. */
    @Test
    void aLossReportedBeforeItsGrantIsAnsweredLosesTheHold() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        Scripted engine = ScriptedEngineProvider.last;
        engine.lostBeforeAnswered = true;
        Lease lease = cerberus.lock("overtaken").acquire(Duration.ZERO);
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::close)
                .isInstanceOf(io.cerberus.LockLostException.class)
                .hasMessageContaining("lost before its grant was answered");
        engine.lostBeforeAnswered = false;
        Lease next = cerberus.lock("overtaken").acquire(Duration.ZERO);
        assertThat(next.isValid())
                .as("a later hold of the same lock is not touched")
                .isTrue();
        next.close();
    }

    @Test
    void manyHeldLocksShareRenewalRoundTrips() throws Exception {
        Cerberus cerberus = client();
        Scripted engine = ScriptedEngineProvider.last;
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            leases.add(cerberus.lock("held-" + i).acquire(Duration.ZERO));
        }
        long until = System.nanoTime() + LEASE.multipliedBy(3).toNanos();
        CountDownLatch never = new CountDownLatch(1);
        never.await(until - System.nanoTime(), TimeUnit.NANOSECONDS); // let three lease periods pass
        assertThat(leases).allMatch(Lease::isValid);
        assertThat(engine.renewedHolds.get()).as("holds renewed").isGreaterThanOrEqualTo(1000 * 3);
        assertThat(engine.renewCalls.get())
                .as("renewal calls for 1000 locks over three lease periods")
                .isLessThan(100);
        leases.forEach(Lease::close);
    }

    /** Holds acquired a few milliseconds apart are renewed together: one round trip a period, not one each. */
    @Test
    void holdsAcquiredMomentsApartShareTheirRenewals() throws Exception {
        Cerberus cerberus = client();
        Scripted engine = ScriptedEngineProvider.last;
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            leases.add(cerberus.lock("apart-" + i).acquire(Duration.ZERO));
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // spread the due times
        }
        pollUntil("three renewals of each hold", () -> engine.renewedHolds.get() >= 10 * 3);
        assertThat(engine.renewCalls.get())
                .as("renewal calls for ten holds due within a twelfth of their lease of each other, over three renewals"
                        + " each (one a hold without sharing: 30)")
                .isLessThanOrEqualTo(10);
        leases.forEach(Lease::close);
    }

    @Test
    void refusedRenewalLosesTheLeaseAtOnce() throws Exception {
        DistributedLock lock = client().lock("refused");
        Scripted engine = ScriptedEngineProvider.last;
        lock.lock();
        CountDownLatch told = new CountDownLatch(1);
        lock.lease().onLost((lease, reason) -> told.countDown());
        engine.renewals = RenewalMode.REFUSE;
        assertThat(told.await(bound(LEASE.toMillis()), TimeUnit.MILLISECONDS))
                .as("listener told within a lease")
                .isTrue();
        assertThat(lock.lease().isValid()).isFalse();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("'refused'")
                .hasMessageContaining("refused to renew");
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void unreachableEngineLosesTheLeaseOnlyWhenItRunsOut() throws Exception {
        DistributedLock lock = client().lock("unreachable");
        Scripted engine = ScriptedEngineProvider.last;
        lock.lock();
        AtomicLong lostAt = new AtomicLong();
        CountDownLatch told = new CountDownLatch(1);
        lock.lease().onLost((lease, reason) -> {
            lostAt.set(System.nanoTime());
            told.countDown();
        });
        long failingFrom = System.nanoTime();
        engine.renewals = RenewalMode.UNREACHABLE;
        pollUntil("the lease to be uncertain", () -> !lock.lease().isValid());
        assertThat(told.getCount()).as("uncertain is not yet lost").isEqualTo(1);
        assertThat(told.await(bound(LEASE.toMillis() * 3), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(Duration.ofNanos(lostAt.get() - failingFrom))
                .as("not given up before the lease could have run out")
                .isGreaterThanOrEqualTo(LEASE.dividedBy(3));
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("could not be reached");
    }

    @Test
    void anUnreachableEngineIsRetriedEveryTenthOfTheLeaseUntilItEndsAndTheLossCountsTheTries() throws Exception {
        Duration lease = Duration.ofSeconds(1); // retries every 100 ms (a tenth), from the first renewal at 333 ms
        DistributedLock lock = client(lease).lock("retried");
        Scripted engine = ScriptedEngineProvider.last;
        engine.renewals = RenewalMode.UNREACHABLE;
        long asked = System.nanoTime();
        lock.lock();
        AtomicLong lostAt = new AtomicLong();
        CountDownLatch told = new CountDownLatch(1);
        lock.lease().onLost((held, reason) -> {
            lostAt.set(System.nanoTime());
            told.countDown();
        });
        assertThat(told.await(bound(lease.toMillis() * 3), TimeUnit.MILLISECONDS))
                .isTrue();

        List<Long> tries = List.copyOf(engine.renewalTimes);
        assertThat(tries)
                .as("about 7 tries in the 667 ms from the first renewal to the lease's end")
                .hasSizeBetween(5, 9);
        for (int i = 1; i < tries.size() - 1; i++) {
            assertThat(Duration.ofNanos(tries.get(i) - tries.get(i - 1)))
                    .as("the pause before try %d: a tenth of the lease", i + 1)
                    .isGreaterThanOrEqualTo(lease.dividedBy(10));
        }
        assertThat(Duration.ofNanos(lostAt.get() - asked))
                .as("lost when the lease ran out, not before, and not a retry's pause after")
                .isGreaterThanOrEqualTo(lease)
                .isLessThan(lease.plusMillis(bound(100)));
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining(
                        "ran out while the engine could not be reached to renew it (" + tries.size() + " tries)");
    }

    @Test
    void anErrorThrownByAnEngineInARenewalIsRetriedAndReportedAsALossWhileOtherHoldsAreRenewed() throws Exception {
        Cerberus cerberus = client();
        Scripted engine = ScriptedEngineProvider.last;
        engine.renewals = RenewalMode.BROKEN;
        Lease broken = cerberus.lock("broken").acquire(Duration.ZERO);
        CountDownLatch told = new CountDownLatch(1);
        AtomicReference<Throwable> cause = new AtomicReference<>();
        broken.onLost((lease, reason) -> {
            cause.set(reason.getCause());
            told.countDown();
        });
        assertThat(told.await(bound(LEASE.toMillis() * 3), TimeUnit.MILLISECONDS))
                .as("the hold whose renewals meet an engine's Error, lost when its lease runs out and reported")
                .isTrue();
        assertThat(cause.get()).isInstanceOf(AssertionError.class).hasMessage("scripted engine broken");
        assertThat(engine.renewalTimes).as("retried within the lease").hasSizeGreaterThan(1);

        engine.renewals = RenewalMode.NORMAL;
        Lease later = cerberus.lock("later").acquire(Duration.ZERO);
        new CountDownLatch(1).await(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(later.isValid())
                .as("a hold taken after the errors, renewed by the same renewer")
                .isTrue();
        later.close();
        assertThatThrownBy(broken::close).isInstanceOf(LockLostException.class);
    }

    @Test
    void uncertainLeaseIsValidAgainWhenARenewalSucceeds() throws Exception {
        // a long lease: the engine must come back well before it runs out
        DistributedLock lock = client(Duration.ofSeconds(2)).lock("recovers");
        Scripted engine = ScriptedEngineProvider.last;
        lock.lock();
        engine.renewals = RenewalMode.UNREACHABLE;
        pollUntil("the lease to be uncertain", () -> !lock.lease().isValid());
        engine.renewals = RenewalMode.NORMAL;
        pollUntil("the lease to be confirmed again", () -> lock.lease().isValid());
        lock.unlock();
    }

    /** Records what the core logs (System.Logger goes to java.util.logging in tests), at every level. */
    private static final class CoreLog extends java.util.logging.Handler implements AutoCloseable {
        private final java.util.logging.Logger logger = java.util.logging.Logger.getLogger("io.cerberus");
        private final java.util.logging.Level before = logger.getLevel();
        final List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();

        CoreLog() {
            logger.setLevel(java.util.logging.Level.ALL);
            logger.addHandler(this);
        }

        List<String> at(java.util.logging.Level level, String containing) {
            return records.stream()
                    .filter(r -> r.getLevel().equals(level))
                    .map(java.util.logging.LogRecord::getMessage)
                    .filter(message -> message.contains(containing))
                    .toList();
        }

        @Override
        public void publish(java.util.logging.LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {
            logger.removeHandler(this);
            logger.setLevel(before);
        }
    }

    @Test
    void failedRenewalsOfOneHoldAreOneWarningAndItsLossIsNoWarning() throws Exception {
        try (CoreLog log = new CoreLog()) {
            DistributedLock lock = client().lock("quiet");
            Scripted engine = ScriptedEngineProvider.last;
            lock.lock();
            CountDownLatch told = new CountDownLatch(1);
            lock.lease().onLost((lease, reason) -> told.countDown());
            engine.renewals = RenewalMode.UNREACHABLE;
            assertThat(told.await(bound(LEASE.toMillis() * 3), TimeUnit.MILLISECONDS))
                    .isTrue();

            assertThat(log.at(java.util.logging.Level.FINE, "could not renew"))
                    .as("the retries, at DEBUG")
                    .isNotEmpty();
            assertThat(log.at(java.util.logging.Level.WARNING, "could not renew"))
                    .as("one warning for the episode")
                    .hasSize(1);
            assertThat(log.at(java.util.logging.Level.WARNING, "was lost"))
                    .as("the holder is told by exception and listener")
                    .isEmpty();
            assertThat(log.at(java.util.logging.Level.INFO, "was lost"))
                    .singleElement()
                    .asString()
                    .contains("tries)");
            assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void aRenewalThatSucceedsAgainIsLoggedOnce() throws Exception {
        try (CoreLog log = new CoreLog()) {
            DistributedLock lock = client(Duration.ofSeconds(2)).lock("back");
            Scripted engine = ScriptedEngineProvider.last;
            lock.lock();
            engine.renewals = RenewalMode.UNREACHABLE;
            // the failed renewal itself, not only an invalid lease: a renewer thread descheduled past the
            // lease's safety margin makes the lease invalid with no failure to log
            pollUntil(
                    "the failed renewal to be logged",
                    () -> !log.at(java.util.logging.Level.WARNING, "could not renew")
                            .isEmpty());
            assertThat(lock.lease().isValid())
                    .as("uncertain after the failed renewal")
                    .isFalse();
            engine.renewals = RenewalMode.NORMAL;
            pollUntil("the lease to be confirmed again", () -> lock.lease().isValid());
            // the hold is valid again a moment before its recovery is logged (Holding.extendedFrom)
            pollUntil(
                    "the recovery to be logged",
                    () -> !log.at(java.util.logging.Level.INFO, "again after").isEmpty());
            int renewed = engine.renewedHolds.get();
            pollUntil("a renewal after the recovery", () -> engine.renewedHolds.get() > renewed);
            assertThat(log.at(java.util.logging.Level.WARNING, "could not renew"))
                    .hasSize(1);
            assertThat(log.at(java.util.logging.Level.INFO, "again after"))
                    .as("the recovery, once: the renewals after it are not recoveries")
                    .singleElement()
                    .asString()
                    .contains("'back'")
                    .containsPattern("again after (1 failed try|[2-9] failed tries)$");
            lock.unlock();
        }
    }

    private static void pollUntil(String what, java.util.function.BooleanSupplier condition) {
        Await.until(what, Duration.ofMillis(bound(3000)), condition);
    }

    @Test
    void unlockWaitsForARenewalInFlight() throws Exception {
        DistributedLock lock = client().lock("in-flight");
        Scripted engine = ScriptedEngineProvider.last;
        CountDownLatch entered = new CountDownLatch(1);
        engine.renewalEntered.set(entered);
        lock.lock();
        assertThat(entered.await(bound(2000), TimeUnit.MILLISECONDS))
                .as("a renewal started")
                .isTrue();
        Thread owner = Thread.currentThread();
        Thread releaser = new Thread(engine.releaseRenewal::countDown);
        // the owner's unlock must block until the renewal returns; let it go from another thread
        // once the owner is seen blocked
        Thread watcher = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(bound(5000));
            while (owner.getState() != Thread.State.WAITING
                    && owner.getState() != Thread.State.TIMED_WAITING
                    && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            releaser.start();
        });
        watcher.start();
        lock.unlock();
        // read before anything else can block the owner: an unlock that did not wait returns while the renewal is still
        // held
        long heldWhenUnlockReturned = engine.releaseRenewal.getCount();
        watcher.join();
        releaser.join();
        assertThat(heldWhenUnlockReturned)
                .as("unlock returned only after the renewal was let go")
                .isZero();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void aRenewalInFlightHoldsUpNoOtherLocksAcquire() throws Exception {
        Cerberus cerberus = client();
        Scripted engine = ScriptedEngineProvider.last;
        CountDownLatch entered = new CountDownLatch(1);
        engine.renewalEntered.set(entered);
        Lease renewing = cerberus.lock("renewing").acquire(Duration.ZERO);
        assertThat(entered.await(bound(2000), TimeUnit.MILLISECONDS))
                .as("a renewal started")
                .isTrue();
        FutureTask<Lease> other = new FutureTask<>(() -> cerberus.lock("other").acquire(Duration.ZERO));
        new Thread(other, "acquires another lock").start();
        try {
            assertThat(other.get(bound(2000), TimeUnit.MILLISECONDS).isValid())
                    .as("another lock, acquired (its renewal scheduled) while a renewal is unanswered")
                    .isTrue();
        } finally {
            engine.releaseRenewal.countDown();
        }
        other.get().close();
        renewing.close();
    }

    @Test
    void aHoldIsRenewedEveryThirdOfItsLeaseAndNoMoreOften() throws Exception {
        Cerberus cerberus = client();
        Scripted engine = ScriptedEngineProvider.last;
        Lease lease = cerberus.lock("cadence").acquire(Duration.ZERO);
        new CountDownLatch(1).await(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS); // three lease periods

        assertThat(lease.isValid()).isTrue();
        assertThat(engine.renewedHolds.get())
                .as("renewals in three lease periods, at most one a third of the lease (and a batch's slack)")
                .isBetween(1, 12);
        lease.close();
    }

    @Test
    void aShortLeaseIsRenewedInTimeWhenALongerOneWasScheduledFirst() throws Exception {
        java.util.Set<Thread> before = renewerThreads();
        Cerberus cerberus = client();
        Lease longer = cerberus.lock("longer").acquire(Duration.ZERO, Duration.ofSeconds(30)); // ends in 30 s
        Thread renewer = renewerThreads().stream()
                .filter(thread -> !before.contains(thread))
                .findFirst()
                .orElseThrow();
        // the renewer asleep until the longer lease's end: the shorter's renewal must wake it
        pollUntil(
                "the renewer to sleep until the longer lease's end",
                () -> renewer.getState() == Thread.State.TIMED_WAITING);
        Lease shorter = cerberus.lock("shorter").acquire(Duration.ZERO); // renewed every 100 ms
        new CountDownLatch(1).await(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);

        assertThat(shorter.isValid())
                .as(
                        "the renewer is woken for an earlier task and takes its tasks by due time, not in the order they came")
                .isTrue();
        assertThat(longer.isValid())
                .as("an explicit lease's end is not taken along with the renewals due long before it")
                .isTrue();
        shorter.close();
        longer.close();
    }

    @Test
    void theFirstRenewalComesAThirdIntoTheLeaseNotSoonerNorMuchLater() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(6));
        Scripted engine = ScriptedEngineProvider.last;
        long asked = System.nanoTime();
        Lease lease = cerberus.lock("first-renewal").acquire(Duration.ZERO);
        long granted = System.nanoTime();
        pollUntil("a first renewal", () -> !engine.renewalTimes.isEmpty());
        long first = engine.renewalTimes.peek();

        // due 2 s after the grant; a batch may take it up to a twelfth of the lease (0.5 s) early
        assertThat(Duration.ofNanos(first - granted))
                .as("the first renewal after the grant")
                .isGreaterThanOrEqualTo(Duration.ofMillis(1500));
        assertThat(Duration.ofNanos(first - asked))
                .as("the first renewal, well before the lease's second half")
                .isLessThan(Duration.ofMillis(2000 + bound(1500)));
        lease.close();
    }

    @Test
    void theRenewerThreadNeverKeepsTheJvmAliveAndEndsWithItsClient() throws Exception {
        java.util.Set<Thread> before = renewerThreads();
        Cerberus cerberus = client();
        List<Thread> started = renewerThreads().stream()
                .filter(thread -> !before.contains(thread))
                .toList();
        assertThat(started).hasSize(1);
        Thread renewer = started.get(0);
        assertThat(renewer.isDaemon()).as("a daemon thread").isTrue();
        cerberus.lock("held").acquire(Duration.ZERO);

        cerberus.close();
        renewer.join(bound(3000));
        assertThat(renewer.isAlive()).as("ended by the client's close").isFalse();
    }

    private static java.util.Set<Thread> renewerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith("cerberus-lease-renewer-"))
                .collect(java.util.stream.Collectors.toSet());
    }
}
