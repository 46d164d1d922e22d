package io.cerberus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.local.ScriptedEngineProvider;
import io.cerberus.local.SwitchableEngineProvider;
import io.cerberus.servers.Await;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EngineSwitchTest {
    /** Fresh store names per test, so tests share nothing. */
    private final String a = "a-" + UUID.randomUUID();

    private final String b = "b-" + UUID.randomUUID();

    private final String c = "c-" + UUID.randomUUID();

    @AfterEach
    void bringBack() {
        SwitchableEngineProvider.down(a, false);
        SwitchableEngineProvider.down(b, false);
        SwitchableEngineProvider.down(c, false);
        SwitchableEngineProvider.silentSlack(a, Duration.ZERO);
        SwitchableEngineProvider.without(b);
    }

    private CerberusBuilder twoEngines() {
        return Cerberus.builder().engine("primary", "switchable:" + a).engine("secondary", "switchable:" + b);
    }

    private Cerberus onlyA() {
        return Cerberus.builder().engine("primary", "switchable:" + a).build();
    }

    @Test
    void switchEngineCyclesThroughTheEnginesInOrderAndReturnsTheOneInUse() {
        try (Cerberus cerberus = twoEngines().engine("third", "mem:" + b).build()) {
            assertThat(cerberus.engines()).containsExactly("primary", "secondary", "third");
            assertThat(cerberus.currentEngine()).isEqualTo("primary");
            assertThat(cerberus.switchEngine()).isEqualTo("secondary");
            assertThat(cerberus.switchEngine()).isEqualTo("third");
            assertThat(cerberus.currentEngineUri()).isEqualTo("mem:" + b);
            assertThat(cerberus.switchEngine()).isEqualTo("primary");
            assertThat(cerberus.switchEngine("third")).isEqualTo("third");
            assertThat(cerberus.switchEngine("third")).isEqualTo("third");
            assertThat(cerberus.currentEngine()).isEqualTo("third");
        }
    }

    @Test
    void fairAndReadWriteLocksAreRefusedOnAnEngineSwitchedToWithoutThemAndItsLockDelayIsNotAskedForThem()
            throws Exception {
        SwitchableEngineProvider.without(b, Capability.FAIR, Capability.READ_WRITE);
        try (Cerberus cerberus = twoEngines().build()) {
            DistributedLock fair = cerberus.fairLock("fair");
            DistributedReadWriteLock readWrite = cerberus.readWriteLock("read-write");
            cerberus.switchEngine("secondary");
            for (DistributedLock lock : List.of(fair, readWrite.readLock(), readWrite.writeLock())) {
                assertThatThrownBy(lock::tryLock)
                        .as(lock.name())
                        .isInstanceOf(UnsupportedCapabilityException.class)
                        .hasMessageContaining("engine 'secondary'");
            }
            DistributedLock exclusive = cerberus.lock("exclusive");
            assertThat(exclusive.tryLock()).isTrue();
            exclusive.unlock();

            cerberus.switchEngine(
                    "primary"); // the secondary is in its lock-delay now, without fair or read-write locks
            for (DistributedLock lock : List.of(fair, readWrite.readLock())) {
                assertThat(lock.tryLock()).as(lock.name()).isTrue();
                lock.unlock();
            }
        }
    }

    @Test
    void switchingToAnUnknownEngineNamesTheKnownOnes() {
        try (Cerberus cerberus = twoEngines().build()) {
            assertThatThrownBy(() -> cerberus.switchEngine("tertiary"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'tertiary'")
                    .hasMessageContaining("[primary, secondary]");
            assertThat(cerberus.currentEngine()).isEqualTo("primary");
        }
    }

    @Test
    void withOneEngineSwitchingDoesNothing() {
        try (Cerberus cerberus = onlyA()) {
            assertThat(cerberus.switchEngine()).isEqualTo("primary");
        }
    }

    @Test
    void checkEngineProbesTheNamedEngineWhetherCurrentOrNot() {
        Cerberus cerberus = twoEngines().build();
        try {
            assertThat(cerberus.engineUri("secondary")).isEqualTo("switchable:" + b);
            cerberus.checkEngine("primary");
            SwitchableEngineProvider.down(b, true);
            cerberus.checkEngine("primary");
            assertThatThrownBy(() -> cerberus.checkEngine("secondary")).isInstanceOf(EngineUnavailableException.class);
            assertThatThrownBy(() -> cerberus.checkEngine("nosuch"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no engine named 'nosuch'");
        } finally {
            cerberus.close();
        }
        assertThatThrownBy(() -> cerberus.checkEngine("primary")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void heldLocksStayOnTheirEngineAndAreReleasedThere() throws Exception {
        try (Cerberus cerberus = twoEngines().lockDelay(Duration.ZERO).build()) {
            Lease before = cerberus.lock("order").acquire(Duration.ZERO);
            cerberus.switchEngine();
            Lease after = cerberus.lock("other").acquire(Duration.ZERO);
            assertThat(before.engineName()).isEqualTo("primary");
            assertThat(after.engineName()).isEqualTo("secondary");
            assertThat(cerberus.inspectEngine("primary", ""))
                    .extracting(LockInfo::name)
                    .containsExactly("order");
            assertThat(cerberus.inspect("")).extracting(LockInfo::name).containsExactly("other");
            before.close();
            after.close();
            assertThat(cerberus.inspectEngine("primary", "")).isEmpty();
            assertThat(cerberus.inspectEngine("secondary", "")).isEmpty();
        }
    }

    @Test
    void duringTheLockDelayAHolderThatDidNotSwitchStillExcludesTheSwitchedClient() throws Exception {
        try (Cerberus unswitched = onlyA();
                Cerberus switched = twoEngines().build()) {
            DistributedLock old = unswitched.lock("stock");
            assertThat(old.tryLock()).isTrue();
            switched.switchEngine();

            assertThat(switched.lock("stock").tryAcquire(Duration.ofMillis(100)))
                    .isEmpty();
            assertThat(switched.inspect(""))
                    .as("the grant on the new engine is given back")
                    .isEmpty();

            old.unlock();
            Lease lease =
                    switched.lock("stock").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
            assertThat(lease.engineName()).isEqualTo("secondary");
            assertThat(unswitched.lock("stock").tryLock())
                    .as("the old engine holds it for the switched client")
                    .isFalse();

            lease.close();
            assertThat(unswitched.lock("stock").tryLock())
                    .as("released on both engines")
                    .isTrue();
            unswitched.lock("stock").unlock();
        }
    }

    @Test
    void aWaiterInterruptedWhileTheOldEngineInItsLockDelayHoldsTheLockGivesBackWhatItTookOnTheNewOne()
            throws Exception {
        try (Cerberus unswitched = onlyA();
                Cerberus switched = twoEngines().build()) {
            assertThat(unswitched.lock("stock").tryLock()).isTrue();
            switched.switchEngine();
            BlockingQueue<Object> got = new LinkedBlockingQueue<>();
            Thread waiter = waiter(switched, got);
            Await.until(
                    "taken on the new engine, waiting for the old one",
                    Duration.ofSeconds(5),
                    () -> !switched.inspect("").isEmpty() && isWaiting(waiter));

            waiter.interrupt();
            assertThat(got.poll(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            assertThat(switched.inspect(""))
                    .as("the hold on the new engine is given back")
                    .isEmpty();
            unswitched.lock("stock").unlock();
        }
    }

    @Test
    void aZeroLockDelayTakesNewLocksOnTheNewEngineOnly() throws Exception {
        try (Cerberus unswitched = onlyA();
                Cerberus switched = twoEngines().lockDelay(Duration.ZERO).build()) {
            assertThat(unswitched.lock("stock").tryLock()).isTrue();
            switched.switchEngine();
            assertThat(switched.lock("stock").tryLock()).isTrue();
            switched.lock("stock").unlock();
            unswitched.lock("stock").unlock();
        }
    }

    @Test
    void theLockDelayEnds() throws Exception {
        try (Cerberus unswitched = onlyA();
                Cerberus switched =
                        twoEngines().lockDelay(Duration.ofMillis(300)).build()) {
            assertThat(unswitched.lock("stock").tryLock()).isTrue();
            long switchedAt = System.nanoTime();
            switched.switchEngine();
            assertThat(switched.lock("stock").tryLock()).isFalse();
            Await.until(
                    "the lock taken once the lock-delay ends",
                    Duration.ofSeconds(5),
                    () -> switched.lock("stock").tryLock());
            Duration after = Duration.ofNanos(System.nanoTime() - switchedAt);
            assertThat(after)
                    .as("not before the lock-delay of 300ms ended")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(after)
                    .as("soon after it ended")
                    .isLessThan(Duration.ofMillis(300
                            + (long) (1_500 * Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1")))));
            switched.lock("stock").unlock();
            unswitched.lock("stock").unlock();
        }
    }

    @Test
    void theDefaultLockDelayCoversTheOldEnginesSilentHolderExpiryWhenItIsLongerThanTheLease() throws Exception {
        // the old engine keeps a silent holder's lock 800ms past its 400ms lease (a server that raised the TTL)
        SwitchableEngineProvider.silentSlack(a, Duration.ofMillis(800));
        try (Cerberus unswitched = onlyA();
                Cerberus switched =
                        twoEngines().defaultLease(Duration.ofMillis(400)).build()) {
            switched.lock("warm-up").acquire(Duration.ofSeconds(5)).close();
            assertThat(unswitched.lock("stock").tryLock()).isTrue();
            long switchedAt = System.nanoTime();
            switched.switchEngine();
            Await.until(
                    "the lock taken once the silent holder expires",
                    Duration.ofSeconds(10),
                    () -> switched.lock("stock").tryLock());
            Duration after = Duration.ofNanos(System.nanoTime() - switchedAt);
            assertThat(after)
                    .as("not before the silent-holder expiry of 1200ms, not the 400ms lease")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(1_200));
            assertThat(after)
                    .as("soon after it")
                    .isLessThan(Duration.ofMillis(1_200
                            + (long) (1_500 * Double.parseDouble(System.getProperty("cerberus.test.timeScale", "1")))));
            switched.lock("stock").unlock();
            unswitched.lock("stock").unlock();
        }
    }

    @Test
    void whileTheOldEngineIsUnreachableAcquisitionsWaitForItsLockDelayToEnd() throws Exception {
        try (Cerberus cerberus = twoEngines().lockDelay(Duration.ofMillis(500)).build()) {
            long switchedAt = System.nanoTime();
            cerberus.switchEngine();
            SwitchableEngineProvider.down(a, true);
            assertThat(cerberus.lock("stock").tryAcquire(Duration.ofMillis(50)))
                    .as("the lock-delay outlasts the wait")
                    .isEmpty();
            assertThat(cerberus.inspect(""))
                    .as("the grant on the new engine is given back")
                    .isEmpty();
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(5))) {
                assertThat(Duration.ofNanos(System.nanoTime() - switchedAt))
                        .isGreaterThanOrEqualTo(Duration.ofMillis(500));
                assertThat(lease.engineName()).isEqualTo("secondary");
            }
        }
    }

    @Test
    void aLockDelayThatEndsWhileTheNewEngineAnswersIsNotWaitedForOnTheUnreachableOldEngine() throws Exception {
        String scripted = "scripted:" + UUID.randomUUID();
        try (Cerberus cerberus = Cerberus.builder()
                .engine("primary", "switchable:" + a)
                .engine("secondary", scripted)
                .lockDelay(Duration.ofMillis(300))
                .build()) {
            cerberus.switchEngine();
            long switchedAt = System.nanoTime();
            SwitchableEngineProvider.down(a, true);
            ScriptedEngineProvider.Scripted secondary = ScriptedEngineProvider.opened(scripted);
            CountDownLatch asking = new CountDownLatch(1);
            secondary.acquireEntered.set(asking);
            CompletableFuture<Lease> taken = CompletableFuture.supplyAsync(() -> {
                try {
                    return cerberus.lock("stock")
                            .tryAcquire(Duration.ofSeconds(5))
                            .orElseThrow();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(asking.await(5, TimeUnit.SECONDS)).isTrue();
            // the new engine answers once the old engine's lock-delay is over
            Await.until(
                    "the old engine's lock-delay of 300ms over",
                    Duration.ofSeconds(5),
                    () -> System.nanoTime() - switchedAt > 350_000_000L);
            secondary.releaseAcquire.countDown();
            try (Lease lease = taken.get(5, TimeUnit.SECONDS)) {
                assertThat(lease.engineName()).isEqualTo("secondary");
            }
        }
    }

    @Test
    void anUnlockWhoseLockDelayHoldCannotBeGivenBackOnTheOldEngineStillFreesTheLock() throws Exception {
        try (Cerberus cerberus = twoEngines().lockDelay(Duration.ofSeconds(30)).build();
                Cerberus onA = onlyA();
                Cerberus onB = Cerberus.builder().engine("switchable:" + b).build()) {
            cerberus.switchEngine();
            DistributedLock lock = cerberus.lock("stock");
            lock.lock();
            assertThat(onA.lock("stock").tryLock())
                    .as("held on the old engine too, for its lock-delay")
                    .isFalse();
            SwitchableEngineProvider.down(a, true);
            lock.unlock();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(onB.lock("stock").tryLock())
                    .as("free on the engine in use; the old engine frees its hold when the lease ends")
                    .isTrue();
            onB.lock("stock").unlock();
        }
    }

    @Test
    void aWaitOnTheEngineSwitchedAwayFromGoesOnOnTheNewOne() throws Exception {
        try (Cerberus holder = onlyA();
                Cerberus cerberus = twoEngines().lockDelay(Duration.ZERO).build()) {
            assertThat(holder.lock("stock").tryLock()).isTrue();
            BlockingQueue<Object> got = new LinkedBlockingQueue<>();
            Thread waiter = waiter(cerberus, got);
            Await.until("the waiter waits on the primary", Duration.ofSeconds(5), () -> isWaiting(waiter));
            long switchedAt = System.nanoTime();
            cerberus.switchEngine();
            assertThat(got.poll(5, TimeUnit.SECONDS))
                    .as("the wait went on on the new engine, where the lock is free")
                    .isEqualTo("secondary");
            assertThat(Duration.ofNanos(System.nanoTime() - switchedAt))
                    .as("soon after the switch")
                    .isLessThan(Duration.ofSeconds(2));
            assertThat(holder.lock("stock").isHeldByCurrentThread())
                    .as("the primary's holder kept its lock")
                    .isTrue();
            holder.lock("stock").unlock();
            waiter.join(5_000);
        }
    }

    @Test
    void aWaitTriesAnUnreachableEngineAgainWithinItsWaitThenFailsNamingIt() throws Exception {
        try (Cerberus cerberus = onlyA()) {
            SwitchableEngineProvider.down(a, true);
            failsUnreachable(
                    "switchable:" + a,
                    Duration.ofMillis(300),
                    Duration.ofSeconds(3),
                    "tried for the whole wait",
                    () -> cerberus.lock("stock").tryAcquire(Duration.ofMillis(300)));

            BlockingQueue<Object> got = new LinkedBlockingQueue<>();
            Thread waiter = waiter(cerberus, got);
            assertThat(got.poll(300, TimeUnit.MILLISECONDS))
                    .as("still trying while the engine is down")
                    .isNull();
            SwitchableEngineProvider.down(a, false);
            assertThat(got.poll(5, TimeUnit.SECONDS))
                    .as("granted once the engine is back, within the wait")
                    .isEqualTo("primary");
            waiter.join(5_000);
        }
    }

    @Test
    void aWaitOnAPrimaryThatDiesGoesOnOnTheEngineFailoverSwitchesTo() throws Exception {
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(200)).checkEvery(Duration.ofMillis(20));
        try (Cerberus holder = onlyA();
                Cerberus cerberus = twoEngines()
                        .lockDelay(Duration.ofMillis(300))
                        .failover(policy)
                        .build()) {
            assertThat(holder.lock("stock").tryLock()).isTrue();
            BlockingQueue<Object> got = new LinkedBlockingQueue<>();
            Thread waiter = waiter(cerberus, got);
            Await.until("the waiter waits on the primary", Duration.ofSeconds(5), () -> isWaiting(waiter));
            long downAt = System.nanoTime();
            SwitchableEngineProvider.down(a, true);
            assertThat(got.poll(10, TimeUnit.SECONDS))
                    .as("the wait went on on the engine failover switched to")
                    .isEqualTo("secondary");
            // unhealthy for 200 ms, then the 300 ms lock-delay of the dead primary (it cannot be asked)
            assertThat(Duration.ofNanos(System.nanoTime() - downAt))
                    .as("no longer than unhealthyFor + lock-delay + 1 s")
                    .isLessThan(Duration.ofMillis(200 + 300 + 1_000));
            waiter.join(5_000);
        }
    }

    @Test
    void withoutFailoverAnUnreachableEngineFailsTheCaller() {
        try (Cerberus cerberus = twoEngines().build()) {
            SwitchableEngineProvider.down(a, true);
            assertThatThrownBy(() -> cerberus.lock("stock").tryLock())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("switchable:" + a);
            assertThat(cerberus.currentEngine()).isEqualTo("primary");
        }
    }

    @Test
    void aLockWithoutAWaitLimitOnAnUnreachableEngineKeepsTryingForTheConnectTimeoutThenFails() {
        try (Cerberus cerberus = Cerberus.builder()
                .engine("primary", "switchable:" + a)
                .connectTimeout(Duration.ofMillis(600))
                .build()) {
            SwitchableEngineProvider.down(a, true);
            failsUnreachable(
                    "switchable:" + a,
                    Duration.ofMillis(600),
                    Duration.ofSeconds(5),
                    "tried again for the connect timeout, not failed at the first try",
                    () -> cerberus.lock("stock").lock());
        }
    }

    @Test
    void withFailoverALockWithoutAWaitLimitKeepsTryingUntilAFailoverCouldHaveHappenedThenFails() {
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(700)).checkEvery(Duration.ofMillis(50));
        try (Cerberus cerberus = twoEngines()
                .connectTimeout(Duration.ofMillis(300))
                .failover(policy)
                .build()) {
            SwitchableEngineProvider.down(a, true);
            SwitchableEngineProvider.down(b, true);
            failsUnreachable(
                    "switchable:" + a,
                    Duration.ofMillis(1050),
                    Duration.ofSeconds(6),
                    "tried for the connect timeout plus the time a failover takes (300 + 700 + 50 ms)",
                    () -> cerberus.lock("stock").lock());
            assertThat(cerberus.currentEngine())
                    .as("no failover to a standby that is down too")
                    .isEqualTo("primary");
        }
    }

    @Test
    void failoverMovesNewAcquisitionsToTheNextHealthyEngineAndTellsTheListeners() throws Exception {
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(200)).checkEvery(Duration.ofMillis(20));
        try (Cerberus cerberus =
                twoEngines().lockDelay(Duration.ofMillis(300)).failover(policy).build()) {
            BlockingQueue<EngineSwitchEvent> events = new LinkedBlockingQueue<>();
            cerberus.onEngineSwitch(events::add);
            long downAt = System.nanoTime();
            SwitchableEngineProvider.down(a, true);

            EngineSwitchEvent event = events.poll(10, TimeUnit.SECONDS);
            assertThat(event).isNotNull();
            // no check passed for 200 ms: the last one that passed may have run up to one check interval before the
            // engine went down
            assertThat(Duration.ofNanos(System.nanoTime() - downAt))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(200).minus(policy.checkEvery()));
            assertThat(event.from()).isEqualTo("primary");
            assertThat(event.to()).isEqualTo("secondary");
            assertThat(event.reason()).isEqualTo(EngineSwitchEvent.Reason.FAILOVER);
            assertThat(event.number()).isEqualTo(1);
            assertThat(cerberus.currentEngine()).isEqualTo("secondary");
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.engineName()).isEqualTo("secondary");
            }

            SwitchableEngineProvider.down(a, false);
            assertThat(events.poll(300, TimeUnit.MILLISECONDS))
                    .as("no fail-back unless configured")
                    .isNull();
            assertThat(cerberus.currentEngine()).isEqualTo("secondary");
        }
    }

    @Test
    void failoverSkipsAStandbyThatFailsItsChecksTooAndTheCheckThreadsEndWithTheClient() throws Exception {
        java.util.Set<Thread> before = monitorThreads();
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(200)).checkEvery(Duration.ofMillis(20));
        Cerberus cerberus = twoEngines()
                .engine("third", "switchable:" + c)
                .lockDelay(Duration.ZERO)
                .failover(policy)
                .build();
        java.util.Set<Thread> started = monitorThreads();
        started.removeAll(before);
        try {
            assertThat(started)
                    .as("a check thread per engine and one that decides")
                    .hasSize(4);
            assertThat(started).as("they never keep the JVM alive").allMatch(Thread::isDaemon);
            BlockingQueue<EngineSwitchEvent> events = new LinkedBlockingQueue<>();
            cerberus.onEngineSwitch(events::add);
            SwitchableEngineProvider.down(a, true);
            SwitchableEngineProvider.down(b, true);
            EngineSwitchEvent event = events.poll(10, TimeUnit.SECONDS);
            assertThat(event).isNotNull();
            assertThat(event.to()).as("the next engine that passes its checks").isEqualTo("third");
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.engineName()).isEqualTo("third");
            }
        } finally {
            cerberus.close();
        }
        Await.until(
                "every check thread ended with its client",
                Duration.ofSeconds(5),
                () -> started.stream().noneMatch(Thread::isAlive));
    }

    @Test
    void healthChecksComeEveryIntervalAndTheirThreadsEndAtOnceWithTheClient() throws Exception {
        java.util.Set<Thread> before = monitorThreads();
        Cerberus cerberus = twoEngines()
                .failover(FailoverPolicy.after(Duration.ofSeconds(30)).checkEvery(Duration.ofMillis(100)))
                .build();
        int from = SwitchableEngineProvider.reads(b);
        CountDownLatch never = new CountDownLatch(1);
        assertThat(never.await(700, TimeUnit.MILLISECONDS)).isFalse(); // a window of 700 ms to count the checks in
        int checks = SwitchableEngineProvider.reads(b) - from;
        cerberus.close();
        assertThat(checks)
                .as("checks of the standby in 700 ms, one every 100 ms")
                .isBetween(3, 12);
        Cerberus slow = twoEngines()
                .failover(FailoverPolicy.after(Duration.ofSeconds(30)).checkEvery(Duration.ofSeconds(20)))
                .build();
        java.util.Set<Thread> slowThreads = monitorThreads();
        slowThreads.removeAll(before);
        assertThat(slowThreads).isNotEmpty();
        slow.close();
        Await.until(
                "the threads of a client checking every 20 s end when it closes, not at their next check",
                Duration.ofSeconds(5),
                () -> slowThreads.stream().noneMatch(Thread::isAlive));
    }

    @Test
    void afterAFailoverTheOldEngineIsTakenTooOnceItPassesItsChecksAgainWithinItsLockDelay() throws Exception {
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(200)).checkEvery(Duration.ofMillis(20));
        try (Cerberus cerberus = twoEngines()
                        .lockDelay(Duration.ofSeconds(30))
                        .failover(policy)
                        .build();
                Cerberus onA = onlyA()) {
            BlockingQueue<EngineSwitchEvent> events = new LinkedBlockingQueue<>();
            cerberus.onEngineSwitch(events::add);
            SwitchableEngineProvider.down(a, true);
            assertThat(events.poll(10, TimeUnit.SECONDS)).isNotNull();
            assertThat(cerberus.lock("stock").tryAcquire(Duration.ofMillis(50)))
                    .as("the old engine fails its checks and its lock-delay outlasts the wait")
                    .isEmpty();
            SwitchableEngineProvider.down(a, false);
            java.util.concurrent.atomic.AtomicReference<Lease> taken =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Await.until("taken once the old engine passes its checks again", Duration.ofSeconds(5), () -> {
                try {
                    cerberus.lock("stock").tryAcquire(Duration.ofMillis(50)).ifPresent(taken::set);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return taken.get() != null;
            });
            assertThat(taken.get().engineName()).isEqualTo("secondary");
            assertThat(onA.lock("stock").tryLock())
                    .as("held on the old engine too, for its lock-delay")
                    .isFalse();
            taken.get().close();
        }
    }

    @Test
    void eachEngineSwitchedAwayFromKeepsItsLockDelayUntilTheClientSwitchesBackToIt() throws Exception {
        try (Cerberus cerberus = twoEngines()
                        .engine("third", "switchable:" + c)
                        .lockDelay(Duration.ofSeconds(30))
                        .build();
                Cerberus onA = onlyA();
                Cerberus onB = Cerberus.builder().engine("switchable:" + b).build();
                Cerberus onC = Cerberus.builder().engine("switchable:" + c).build()) {
            cerberus.switchEngine("secondary");
            cerberus.switchEngine("third");
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.engineName()).isEqualTo("third");
                assertThat(onA.lock("stock").tryLock())
                        .as("the first engine is still in its lock-delay")
                        .isFalse();
                assertThat(onB.lock("stock").tryLock()).as("the second too").isFalse();
            }
            cerberus.switchEngine("primary");
            try (Lease lease = cerberus.lock("other").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.engineName()).isEqualTo("primary");
                assertThat(onB.lock("other").tryLock())
                        .as("the second engine, still in its lock-delay")
                        .isFalse();
                assertThat(onC.lock("other").tryLock())
                        .as("the third, just switched away from")
                        .isFalse();
            }
        }
    }

    private static java.util.Set<Thread> monitorThreads() {
        java.util.Set<Thread> threads = new java.util.HashSet<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().startsWith("cerberus-health-")
                    || thread.getName().startsWith("cerberus-failover-")) {
                threads.add(thread);
            }
        }
        return threads;
    }

    @Test
    void aStandbyThatIsDownAtStartDoesNotStopTheClientAndIsUsedOnceItIsUp() throws Exception {
        SwitchableEngineProvider.down(b, true);
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(200)).checkEvery(Duration.ofMillis(20));
        try (Cerberus cerberus =
                twoEngines().lockDelay(Duration.ZERO).failover(policy).build()) {
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.engineName()).as("the primary serves").isEqualTo("primary");
            }
            BlockingQueue<EngineSwitchEvent> events = new LinkedBlockingQueue<>();
            cerberus.onEngineSwitch(events::add);
            SwitchableEngineProvider.down(a, true);
            assertThat(events.poll(600, TimeUnit.MILLISECONDS))
                    .as("no switch to a standby that is down too")
                    .isNull();
            assertThatThrownBy(() -> cerberus.lock("stock").tryLock()).isInstanceOf(EngineUnavailableException.class);

            SwitchableEngineProvider.down(b, false);
            EngineSwitchEvent event = events.poll(10, TimeUnit.SECONDS);
            assertThat(event).as("the standby, up now, is opened and taken").isNotNull();
            assertThat(event.to()).isEqualTo("secondary");
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.engineName()).isEqualTo("secondary");
            }
        }
    }

    @Test
    void aWaitOnAStandbySwitchedToWhileItCannotBeOpenedTriesItAgainWithinTheWait() throws Exception {
        SwitchableEngineProvider.down(b, true);
        try (Cerberus cerberus = twoEngines().lockDelay(Duration.ZERO).build()) {
            cerberus.switchEngine("secondary");
            assertThatThrownBy(() -> cerberus.lock("stock").tryAcquire(Duration.ofMillis(200)))
                    .as("the standby could not be opened within the wait")
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("switchable:" + b);
            SwitchableEngineProvider.down(b, false);
            try (Lease lease =
                    cerberus.lock("stock").tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
                assertThat(lease.engineName())
                        .as("opened once it was up, within the wait")
                        .isEqualTo("secondary");
            }
        }
    }

    @Test
    void aPrimaryThatIsDownAtStartFailsTheBuildNamingIt() {
        SwitchableEngineProvider.down(a, true);
        assertThatThrownBy(() -> twoEngines().build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(a);
    }

    @Test
    void failBackReturnsToThePrimaryOnceItIsHealthyForTheConfiguredTime() throws Exception {
        FailoverPolicy policy = FailoverPolicy.after(Duration.ofMillis(100))
                .checkEvery(Duration.ofMillis(20))
                .failBackAfter(Duration.ofMillis(300));
        try (Cerberus cerberus = twoEngines().failover(policy).build()) {
            BlockingQueue<EngineSwitchEvent> events = new LinkedBlockingQueue<>();
            cerberus.onEngineSwitch(events::add);
            SwitchableEngineProvider.down(a, true);
            assertThat(events.poll(10, TimeUnit.SECONDS))
                    .extracting(EngineSwitchEvent::reason)
                    .isEqualTo(EngineSwitchEvent.Reason.FAILOVER);

            long upAt = System.nanoTime();
            SwitchableEngineProvider.down(a, false);
            EngineSwitchEvent back = events.poll(10, TimeUnit.SECONDS);
            assertThat(back).isNotNull();
            assertThat(Duration.ofNanos(System.nanoTime() - upAt)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(back.reason()).isEqualTo(EngineSwitchEvent.Reason.FAILBACK);
            assertThat(back.to()).isEqualTo("primary");
            assertThat(back.number()).isEqualTo(2);
        }
    }

    @Test
    void aFailingListenerDoesNotStopTheSwitchOrTheOtherListeners() {
        try (Cerberus cerberus = twoEngines().build()) {
            List<EngineSwitchEvent> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            cerberus.onEngineSwitch(event -> {
                throw new IllegalStateException("listener bug");
            });
            cerberus.onEngineSwitch(seen::add);
            assertThat(cerberus.switchEngine()).isEqualTo("secondary");
            assertThat(seen)
                    .singleElement()
                    .extracting(EngineSwitchEvent::reason)
                    .isEqualTo(EngineSwitchEvent.Reason.MANUAL);
        }
    }

    @Test
    void badSettingsAreRefusedWithTheRule() {
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("mem:")
                        .failover(FailoverPolicy.after(Duration.ofSeconds(1)))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least two engines");
        assertThatThrownBy(() -> Cerberus.builder().lockDelay(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("zero or positive");
        assertThatThrownBy(() -> FailoverPolicy.after(Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 10ms");
        assertThatThrownBy(() -> FailoverPolicy.after(Duration.ofSeconds(1)).checkEvery(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("health check interval");
        assertThatThrownBy(() -> Cerberus.builder().failover(null)).isInstanceOf(IllegalArgumentException.class);
    }

    /** @return a started thread that acquires "stock" waiting up to 20 s, then puts the granting engine's name (or what it threw) */
    private static Thread waiter(Cerberus cerberus, BlockingQueue<Object> got) {
        Thread waiter = new Thread(() -> {
            try (Lease lease = cerberus.lock("stock").acquire(Duration.ofSeconds(20))) {
                got.add(lease.engineName());
            } catch (Exception | Error e) {
                got.add(e);
            }
        });
        waiter.start();
        return waiter;
    }

    private static boolean isWaiting(Thread thread) {
        return thread.getState() == Thread.State.TIMED_WAITING || thread.getState() == Thread.State.WAITING;
    }

    /**
     * Asserts that {@code call} fails with the engine at {@code uri} unreachable, having tried for at least
     * {@code atLeast} and for less than {@code within}.
     */
    private static void failsUnreachable(
            String uri, Duration atLeast, Duration within, String why, ThrowableAssert.ThrowingCallable call) {
        long start = System.nanoTime();
        assertThatThrownBy(call).isInstanceOf(EngineUnavailableException.class).hasMessageContaining(uri);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as(why)
                .isGreaterThanOrEqualTo(atLeast)
                .isLessThan(within);
    }
}
