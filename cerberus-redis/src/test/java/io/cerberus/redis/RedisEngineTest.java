package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.LockLostException;
import io.cerberus.servers.FaultProxy;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.HandOff;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the Redis engine promises beyond the conformance suite, measured on a real redis-server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisEngineTest {
    private static RedisWithAdmin server;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private String namespace;

    @BeforeAll
    static void startServer() {
        server = RedisWithAdmin.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @BeforeEach
    void newNamespace() {
        namespace = "engine-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void cleanUp() throws Exception {
        threads.forEach(Thread::interrupt);
        for (AutoCloseable closeable : closeAfter) {
            closeable.close();
        }
    }

    private Cerberus client(Duration lease) {
        Cerberus cerberus = Cerberus.builder()
                .engine(server.uri())
                .namespace(namespace)
                .defaultLease(lease)
                .build();
        closeAfter.add(cerberus);
        return cerberus;
    }

    private RedisEngine engine() {
        RedisEngine engine = (RedisEngine) Engines.open(server.uri(), Duration.ofSeconds(5));
        closeAfter.add(engine);
        return engine;
    }

    private Acquisition attempt(String name, LockMode mode) {
        return new Acquisition(
                new LockKey(namespace, name),
                mode,
                UUID.randomUUID().toString().replace("-", ""),
                "test " + mode.label(),
                Duration.ofSeconds(30));
    }

    private Thread thread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
        return thread;
    }

    private static long total(Map<String, Long> before, Map<String, Long> after, String... commands) {
        long sum = 0;
        for (String command : commands) {
            sum += after.getOrDefault(command, 0L) - before.getOrDefault(command, 0L);
        }
        return sum;
    }

    /** Commands a client sends itself (commandstats also counts the commands run inside scripts). */
    private static long sentByClients(Map<String, Long> before, Map<String, Long> after) {
        return total(
                before,
                after,
                "evalsha",
                "eval",
                "subscribe",
                "unsubscribe",
                "ping",
                "hello",
                "scan",
                "client",
                "auth");
    }

    // ---- tokens --------------------------------------------------------------------------------

    @Test
    void releasedNamesLeaveOnlyTheNamespacesTokenCounter() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        long last = 0;
        for (int i = 0; i < 300; i++) {
            try (Lease lease = cerberus.lock("order:" + (i % 150)).acquire(Duration.ofSeconds(5))) {
                assertThat(lease.fencingToken()).as("token %d", i).isGreaterThan(last);
                last = lease.fencingToken();
            }
        }
        String counter = LockKeys.of(new LockKey(namespace, "any")).tokens();
        assertThat(server.admin().keys("cerberus:{" + namespace + ":*")).containsExactly(counter);
        assertThat(server.admin().pttl(counter)).as("kept for ever").isEqualTo(-1L);
        assertThat(Long.parseLong(server.admin().get(counter))).isEqualTo(last);
    }

    @Test
    void aLostCounterStartsAgainAboveEveryEarlierToken() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        long before;
        try (Lease lease = cerberus.lock("lost").acquire(Duration.ofSeconds(5))) {
            before = lease.fencingToken();
        }
        server.admin().del(LockKeys.of(new LockKey(namespace, "lost")).tokens());
        try (Lease lease = cerberus.lock("lost").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.fencingToken()).isGreaterThan(before);
        }
    }

    @Test
    void everySlotHasACounterKeyOnItAndNoLockTagCanBeOne() {
        String tokens = LockKeys.of(new LockKey("ns", "x")).tokens();
        for (int slot = 0; slot < 16384; slot += 97) {
            String counter = LockKeys.slotCounter(tokens, slot);
            assertThat(SlotHash.getSlot(counter)).isEqualTo(slot);
            assertThat(counter).startsWith("cerberus:{ns:%t").endsWith("}:tokens");
            assertThat(LockKeys.lockNameOfHoldKey(counter)).isEmpty();
        }
        assertThat(LockKeys.of(new LockKey("ns", "%t")).owner()).startsWith("cerberus:{ns:%25t}");
    }

    // ---- cost ----------------------------------------------------------------------------------

    @Test
    void anUncontendedCycleRunsNineCommandsAndPublishesNothing() throws Exception {
        RedisEngine engine = engine();
        Acquisition warm = attempt("cycle", LockMode.EXCLUSIVE); // the scripts' first use (EVALSHA, then EVAL)
        assertThat(engine.tryAcquire(warm)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(engine.release(warm)).isTrue();
        Map<String, Long> before = server.commandCalls();
        Acquisition attempt = attempt("cycle", LockMode.EXCLUSIVE);
        assertThat(engine.tryAcquire(attempt)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(engine.release(attempt)).isTrue();
        Map<String, Long> after = server.commandCalls();
        long all = after.entrySet().stream()
                .mapToLong(e -> e.getValue() - before.getOrDefault(e.getKey(), 0L))
                .sum();
        // 2 EVALSHA; acquire EXISTS INCR HSET PEXPIRE; release HMGET DEL; and the INFO reading them
        assertThat(all - total(before, after, "info")).isEqualTo(8);
        assertThat(total(before, after, "publish")).as("nobody waited").isZero();
    }

    @Test
    void theReleaseOfAHoldSomeoneWasToldIsBusyPublishesOnce() throws Exception {
        RedisEngine engine = engine();
        Acquisition holder = attempt("waited", LockMode.EXCLUSIVE);
        assertThat(engine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        RedisEngine other = engine();
        Acquisition waiter = attempt("waited", LockMode.EXCLUSIVE);
        assertThat(other.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
        Map<String, Long> before = server.commandCalls();
        assertThat(engine.release(holder)).isTrue();
        assertThat(total(before, server.commandCalls(), "publish")).isEqualTo(1);
        assertThat(other.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(other.release(waiter)).isTrue();
    }

    @Test
    void anExclusiveHoldGrantedWhileOthersQueueTellsThemAtItsRelease() throws Exception {
        RedisEngine engine = engine();
        Acquisition fairHolder = attempt("mixed", LockMode.FAIR);
        assertThat(engine.tryAcquire(fairHolder)).isInstanceOf(AcquireResult.Granted.class);
        RedisEngine other = engine();
        Acquisition queued = attempt("mixed", LockMode.FAIR);
        assertThat(other.tryAcquire(queued)).isInstanceOf(AcquireResult.Busy.class);
        assertThat(engine.release(fairHolder)).isTrue();
        // an exclusive attempt does not queue: it may take the name before the queued waiter asks again
        Acquisition exclusive = attempt("mixed", LockMode.EXCLUSIVE);
        assertThat(engine.tryAcquire(exclusive)).isInstanceOf(AcquireResult.Granted.class);
        Map<String, Long> before = server.commandCalls();
        assertThat(engine.release(exclusive)).isTrue();
        assertThat(total(before, server.commandCalls(), "publish"))
                .as("the queued waiter is told")
                .isEqualTo(1);
        assertThat(other.tryAcquire(queued)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(other.release(queued)).isTrue();
    }

    @Test
    void blockedWaiterSendsFewCommandsDuringAFiveSecondWait() throws Exception {
        client(Duration.ofSeconds(30)).lock("quiet").lock();
        DistributedLock waiter = client(Duration.ofSeconds(30)).lock("quiet");
        Map<String, Long> before = server.commandCalls();
        assertThat(waiter.tryLock(5, TimeUnit.SECONDS)).isFalse();
        Map<String, Long> after = server.commandCalls();
        long scripts = total(before, after, "evalsha", "eval");
        long all = sentByClients(before, after);
        System.out.printf("blocked waiter, 5 s: %d script calls, %d commands sent in all%n", scripts, all);
        // first try, one re-check after subscribing, one try per 2 s retry bound, the final withdrawal
        assertThat(scripts).isLessThanOrEqualTo(7);
        assertThat(total(before, after, "subscribe")).isEqualTo(1);
        assertThat(all).isLessThanOrEqualTo(10);
    }

    @Test
    void renewalsOfAThousandLocksShareRoundTrips() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        Cerberus cerberus = client(lease);
        List<DistributedLock> held = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            DistributedLock lock = cerberus.lock("many-" + i);
            lock.lock();
            held.add(lock);
        }
        Map<String, Long> before = server.commandCalls();
        Thread.sleep(lease.toMillis());
        Map<String, Long> after = server.commandCalls();
        long scripts = total(before, after, "evalsha", "eval");
        System.out.printf(
                "1000 held locks, lease %s: %d script calls in one lease (3 renewal periods)%n", lease, scripts);
        assertThat(scripts)
                .as("renewal scripts for 1000 locks over 3 renewal periods")
                .isLessThanOrEqualTo(60);
        for (DistributedLock lock : held) {
            assertThat(lock.lease().isValid()).isTrue();
        }
        held.forEach(DistributedLock::unlock);
    }

    @Test
    void aReleaseHandsTheLockToTheNextThreadOfTheClientInOneScript() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        // the server learns each script at its first use (a refused EVALSHA, then EVAL): not counted below
        Lease warmHolder = cerberus.lock("warm-up").acquire(Duration.ofSeconds(5));
        Thread warmWaiter = thread("warm-up", () -> {
            try {
                cerberus.lock("warm-up").acquire(TestTimes.millis(20_000)).close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.untilWaiting(warmWaiter, TestTimes.millis(5000));
        warmHolder.close();
        warmWaiter.join(TestTimes.millis(10_000).toMillis());
        DistributedLock lock = cerberus.lock("handed");
        Lease first = lock.acquire(Duration.ofSeconds(5));
        int waiters = 6;
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<Long> fences = Collections.synchronizedList(new ArrayList<>());
        List<Thread> line = new ArrayList<>();
        for (int i = 1; i <= waiters; i++) {
            String name = "waiter-" + i;
            Thread waiter = thread(name, () -> {
                try (Lease lease = lock.acquire(TestTimes.millis(20_000))) {
                    order.add(name);
                    fences.add(lease.fencingToken());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Poll.untilWaiting(waiter, TestTimes.millis(5000));
            line.add(waiter);
        }
        Map<String, Long> before = server.commandCalls();
        first.close();
        for (Thread waiter : line) {
            waiter.join(TestTimes.millis(10_000).toMillis());
            assertThat(waiter.isAlive()).as("%s done", waiter.getName()).isFalse();
        }
        Map<String, Long> after = server.commandCalls();
        assertThat(order)
                .as("served in turn")
                .containsExactly("waiter-1", "waiter-2", "waiter-3", "waiter-4", "waiter-5", "waiter-6");
        for (int i = 1; i < fences.size(); i++) {
            assertThat(fences.get(i))
                    .as("a hand-off is a new hold: a new fence")
                    .isGreaterThan(fences.get(i - 1));
        }
        long scripts = total(before, after, "evalsha", "eval");
        // 4 hand-offs, then a release for all and the next waiter's acquire, a hand-off, the last release;
        // without hand-offs 7 releases and 6 acquires
        assertThat(scripts).as("scripts for 7 holds passed along a line of 6").isEqualTo(8);
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aHandOverOnlyReleasesWhereOthersQueueAndNothingWhenNotHeld() {
        RedisEngine engine = engine();
        Acquisition holder = attempt("queued", LockMode.EXCLUSIVE);
        Acquisition next = attempt("queued", LockMode.EXCLUSIVE);
        Acquisition fair = attempt("queued", LockMode.FAIR);
        assertThat(engine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(engine.tryAcquire(fair)).as("queued in the store").isInstanceOf(AcquireResult.Busy.class);
        assertThat(engine.handOver(holder, next))
                .as("a fair waiter queues: released, not handed")
                .isEqualTo(HandOff.notHanded(true));
        assertThat(engine.tryAcquire(fair)).as("the queue's head takes it").isInstanceOf(AcquireResult.Granted.class);
        assertThat(engine.handOver(holder, next)).as("no longer held: nothing").isEqualTo(HandOff.notHanded(false));
        assertThat(engine.release(fair)).isTrue();
        engine.abandon(next);
    }

    // ---- waking --------------------------------------------------------------------------------

    @Test
    void releaseWakesExactlyOneLocalExclusiveWaiter() throws Exception {
        RedisEngine holderEngine = engine();
        Acquisition holder = attempt("herd", LockMode.EXCLUSIVE);
        assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        RedisEngine engine = engine();
        AtomicInteger woken = new AtomicInteger();
        List<Thread> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Acquisition waiter = attempt("herd", LockMode.EXCLUSIVE);
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
            engine.awaitChange(waiter, Duration.ZERO); // the first waiter re-checks once after subscribing
            waiting.add(thread("waiter-" + i, () -> {
                try {
                    engine.awaitChange(waiter, Duration.ofSeconds(20));
                    woken.incrementAndGet();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        for (Thread thread : waiting) {
            Poll.untilWaiting(thread, TestTimes.millis(5000));
        }
        assertThat(engine.waiters().subscriptions())
                .as("one subscription for four waiters")
                .isEqualTo(1);
        assertThat(holderEngine.release(holder)).isTrue();
        Poll.until("a waiter to wake", TestTimes.millis(2000), () -> woken.get() >= 1);
        Thread.sleep(TestTimes.millis(500).toMillis());
        assertThat(woken.get()).as("waiters woken by one release").isEqualTo(1);
    }

    @Test
    void aReleaseByAnotherClientCallsAnAsyncWaitersCallbackOnce() throws Exception {
        RedisEngine holderEngine = engine();
        Acquisition holder = attempt("notify", LockMode.EXCLUSIVE);
        assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        RedisEngine engine = engine();
        Acquisition waiter = attempt("notify", LockMode.EXCLUSIVE);
        assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
        engine.awaitChange(waiter, Duration.ZERO); // the first wait re-checks once after subscribing
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch woken = new CountDownLatch(1);
        NotifiesChanges.ChangeWatch watch = engine.onChange(waiter, () -> {
            calls.incrementAndGet();
            woken.countDown();
        });
        assertThat(calls).as("called before any change").hasValue(0);
        assertThat(engine.waiters().callbacks()).isEqualTo(1);

        assertThat(holderEngine.release(holder)).isTrue();
        assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .as("woken by the release")
                .isTrue();
        Acquisition next = attempt("notify", LockMode.EXCLUSIVE);
        assertThat(holderEngine.tryAcquire(next)).isInstanceOf(AcquireResult.Granted.class);
        // asked again, as a woken waiter does: told busy, so the next release publishes
        assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
        assertThat(holderEngine.release(next)).isTrue();
        Poll.until("the second release to reach the waiter", TestTimes.millis(2000), () -> wokenAtOnce(engine, waiter));
        watch.cancel();
        assertThat(calls).as("calls of one registration, after two releases").hasValue(1);
        assertThat(engine.waiters().callbacks()).isZero();
    }

    @Test
    void cancelledAsyncWaitsLeaveNoCallbackBehind() throws Exception {
        RedisEngine holderEngine = engine();
        Acquisition holder = attempt("notify-cancel", LockMode.EXCLUSIVE);
        assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        RedisEngine engine = engine();
        Acquisition waiter = attempt("notify-cancel", LockMode.EXCLUSIVE);
        assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
        engine.awaitChange(waiter, Duration.ZERO);
        AtomicInteger calls = new AtomicInteger();
        for (int i = 0; i < 1000; i++) {
            engine.onChange(waiter, calls::incrementAndGet).cancel();
        }
        assertThat(engine.waiters().callbacks())
                .as("callbacks left by 1,000 cancelled waits")
                .isZero();

        assertThat(holderEngine.release(holder)).isTrue();
        Poll.until("the release to reach the waiter", TestTimes.millis(2000), () -> wokenAtOnce(engine, waiter));
        assertThat(calls).as("cancelled callbacks called").hasValue(0);
        engine.abandon(waiter);
        assertThat(engine.waiters().subscriptions()).isZero();
    }

    /** @return whether a callback registered now is called at once: the waiter was woken since its last wait */
    private static boolean wokenAtOnce(RedisEngine engine, Acquisition waiter) {
        AtomicInteger called = new AtomicInteger();
        engine.onChange(waiter, called::incrementAndGet).cancel();
        return called.get() == 1;
    }

    @Test
    void releaseOfAFairLockWakesTheHeadOfTheQueue() throws Exception {
        RedisEngine holderEngine = engine();
        Acquisition holder = attempt("fifo", LockMode.FAIR);
        assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        RedisEngine engine = engine();
        List<Acquisition> queue = new ArrayList<>();
        List<String> wokenOrder = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 3; i++) {
            Acquisition waiter = attempt("fifo", LockMode.FAIR);
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
            engine.awaitChange(waiter, Duration.ZERO);
            queue.add(waiter);
        }
        List<Thread> waiting = new ArrayList<>();
        for (Acquisition waiter : List.of(queue.get(2), queue.get(1))) {
            waiting.add(thread("late", () -> {
                try {
                    engine.awaitChange(waiter, Duration.ofSeconds(20));
                    wokenOrder.add(waiter.token());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        CountDownLatch headWoken = new CountDownLatch(1);
        waiting.add(thread("head", () -> {
            try {
                engine.awaitChange(queue.get(0), Duration.ofSeconds(20));
                headWoken.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        for (Thread thread : waiting) {
            Poll.untilWaiting(thread, TestTimes.millis(5000));
        }
        assertThat(holderEngine.release(holder)).isTrue();
        assertThat(headWoken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .as("the head is woken")
                .isTrue();
        Thread.sleep(TestTimes.millis(300).toMillis());
        assertThat(wokenOrder).as("waiters behind the head stay asleep").isEmpty();
        assertThat(engine.tryAcquire(queue.get(1)))
                .as("the second may not pass the head")
                .isInstanceOf(AcquireResult.Busy.class);
        assertThat(engine.tryAcquire(queue.get(0))).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void aDeadFairWaiterBlocksTheQueueOnlyUntilItIsStale() throws Exception {
        RedisEngine engine = engine();
        Acquisition holder = attempt("dead-waiter", LockMode.FAIR);
        assertThat(engine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        Acquisition dead = attempt("dead-waiter", LockMode.FAIR);
        assertThat(engine.tryAcquire(dead))
                .as("queued, then never heard from again")
                .isInstanceOf(AcquireResult.Busy.class);
        long deadQueuedAt = System.nanoTime();

        DistributedLock live = client(Duration.ofSeconds(30)).fairLock("dead-waiter");
        CountDownLatch acquired = new CountDownLatch(1);
        long[] acquiredAt = new long[1];
        Thread waiter = thread("live fair waiter", () -> {
            try {
                if (live.tryLock(30, TimeUnit.SECONDS)) {
                    acquiredAt[0] = System.nanoTime();
                    acquired.countDown();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.untilWaiting(waiter, TestTimes.millis(5000));
        assertThat(engine.release(holder)).isTrue();
        assertThat(acquired.await(
                        RedisEngine.STALE_WAITER.plus(TestTimes.millis(5000)).toMillis(), TimeUnit.MILLISECONDS))
                .as("the live waiter gets the lock once the dead one is dropped")
                .isTrue();
        Duration blocked = Duration.ofNanos(acquiredAt[0] - deadQueuedAt);
        System.out.printf(
                "a dead fair waiter held the queue for %d ms (stale after %s)%n",
                blocked.toMillis(), RedisEngine.STALE_WAITER);
        assertThat(blocked)
                .as("the dead waiter, ahead in the queue, was respected until it went stale")
                .isGreaterThanOrEqualTo(RedisEngine.STALE_WAITER.minusMillis(100));
        // the live waiter's thread holds the lock; unlock happens when the thread ends (the client closes)
    }

    // ---- epochs --------------------------------------------------------------------------------

    @Test
    void theEpochIsOneKeyUnderTheNamespacesPrefixKeptForEverAndNoLocksKey() throws Exception {
        RedisEngine engine = engine();
        Cerberus cerberus = client(Duration.ofSeconds(30));
        cerberus.lock("epoch").lock();
        cerberus.lock(":").lock();
        assertThat(engine.raiseEpoch(namespace, 7)).isEqualTo(7);
        String key = LockKeys.epochKey(namespace);
        assertThat(key).startsWith("cerberus:{" + namespace + ":").isEqualTo("cerberus:{" + namespace + ":}:epoch");
        assertThat(server.admin().get(key)).isEqualTo("7");
        assertThat(server.admin().pttl(key)).as("no expiry").isEqualTo(-1L);
        for (String name : List.of("epoch", ":", "}:epoch", "idem:x")) {
            assertThat(LockKeys.of(new LockKey(namespace, name)).all(false)).doesNotContain(key);
            assertThat(LockKeys.of(new LockKey(namespace, name)).all(true)).doesNotContain(key);
        }
        assertThat(RedisIdempotencyStore.key(namespace + "/epoch")).isNotEqualTo(key);
        assertThat(LockKeys.lockNameOfHoldKey(key)).isEmpty();
        assertThat(cerberus.inspect("")).extracting(LockInfo::name).containsExactlyInAnyOrder("epoch", ":");
        assertThatThrownBy(() -> engine.raiseEpoch(namespace, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("positive");
    }

    @Test
    void epochsAreComparedExactlyNotAsLuaDoubles() {
        RedisEngine engine = engine();
        assertThat(engine.raiseEpoch(namespace, Long.MAX_VALUE - 1)).isEqualTo(Long.MAX_VALUE - 1);
        assertThat(engine.raiseEpoch(namespace, Long.MAX_VALUE - 2)).isEqualTo(Long.MAX_VALUE - 1);
        assertThat(engine.raiseEpoch(namespace, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
        assertThat(engine.epoch(namespace)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void withWaitReplicasAnEpochRaiseNoReplicaAcknowledgesFailsAndOneTheReplicaHasReturns() throws Exception {
        try (RedisEngine alone =
                (RedisEngine) Engines.open(server.uri() + "?waitReplicas=1&waitTimeout=200ms", Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> alone.raiseEpoch(namespace, 3))
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(server.uri())
                    .hasMessageContaining("only 0 of the 1 replica")
                    .hasMessageContaining("epoch of namespace '" + namespace + "'");
        }
        try (RedisWithAdmin replica =
                        RedisWithAdmin.start("--replicaof", "127.0.0.1", Integer.toString(server.port()));
                RedisEngine replicated = (RedisEngine)
                        Engines.open(server.uri() + "?waitReplicas=1&waitTimeout=5s", Duration.ofSeconds(5))) {
            Poll.until(
                    "the replica to be in sync",
                    TestTimes.millis(20_000),
                    () -> replica.admin().info("replication").contains("master_link_status:up"));
            assertThat(replicated.raiseEpoch(namespace, 4)).isEqualTo(4);
            assertThat(replica.admin().get(LockKeys.epochKey(namespace)))
                    .as("the raise is on the replica when it returns")
                    .isEqualTo("4");
        }
    }

    @Test
    void anEpochOfAServerThatDoesNotAnswerFailsWithinTheTimeoutNamingTheUri() throws Exception {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", server.port());
                RedisEngine engine = (RedisEngine)
                        Engines.open("redis://127.0.0.1:" + proxy.port() + "?timeout=500ms", Duration.ofSeconds(5))) {
            assertThat(engine.raiseEpoch(namespace, 2)).isEqualTo(2);
            proxy.mode(FaultProxy.Mode.BLACKHOLE);
            long start = System.nanoTime();
            assertThatThrownBy(() -> engine.epoch(namespace))
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("redis://127.0.0.1:" + proxy.port())
                    .hasMessageContaining("epoch of namespace");
            assertThatThrownBy(() -> engine.raiseEpoch(namespace, 3))
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("redis://127.0.0.1:" + proxy.port());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(5_000));
        }
    }

    // ---- names and keys ------------------------------------------------------------------------

    @Test
    void oddNamesKeepOneHashTagAndNeverCollide() {
        List<String> names =
                List.of("{a}", "%7Ba%7D", "}", "{", "a}b{c", "*", "a b", "a%20b", "ключ", "a:b", "a?", "[x]", "\\");
        List<String> owners = new ArrayList<>();
        for (String name : names) {
            LockKeys keys = LockKeys.of(new LockKey("ns:with{brace}", name));
            String tag = keys.owner()
                    .substring(keys.owner().indexOf('{') + 1, keys.owner().indexOf('}'));
            assertThat(keys.owner())
                    .as("the hash tag of '%s' spans namespace and name", name)
                    .endsWith("}:owner");
            assertThat(keys.owner().indexOf('}')).isEqualTo(keys.owner().lastIndexOf('}'));
            assertThat(tag).doesNotContain("{", "}", "*", "?", "[", " ");
            for (String key : keys.all(true)) {
                assertThat(SlotHash.getSlot(key)).as("slot of %s", key).isEqualTo(SlotHash.getSlot(keys.owner()));
            }
            assertThat(SlotHash.getSlot(keys.channel())).isEqualTo(SlotHash.getSlot(keys.owner()));
            assertThat(LockKeys.lockNameOfHoldKey(keys.owner())).contains(name);
            owners.add(keys.owner());
        }
        assertThat(owners).doesNotHaveDuplicates();
    }

    @Test
    void inspectMatchesPrefixesLiterally() throws Exception {
        Cerberus cerberus = client(Duration.ofSeconds(30));
        for (String name : List.of("a*b", "axb", "a?c", "{a}", "ключ-1")) {
            cerberus.lock(name).lock();
        }
        cerberus.readWriteLock("shared").readLock().lock();
        assertThat(cerberus.inspect("a*")).extracting(LockInfo::name).containsExactly("a*b");
        assertThat(cerberus.inspect("a?")).extracting(LockInfo::name).containsExactly("a?c");
        assertThat(cerberus.inspect("{")).extracting(LockInfo::name).containsExactly("{a}");
        assertThat(cerberus.inspect("ключ")).extracting(LockInfo::name).containsExactly("ключ-1");
        assertThat(cerberus.inspect("")).hasSize(6);
        LockInfo reader = cerberus.inspect("shared").get(0);
        assertThat(reader.mode()).isEqualTo("read");
        assertThat(reader.leaseRemaining().orElseThrow()).isPositive();
    }

    @Test
    void inspectReportsTheWaitersOfABusyLockAsUnknownNeverZero() throws Exception {
        Cerberus holder = client(Duration.ofSeconds(30));
        Cerberus other = client(Duration.ofSeconds(30));
        holder.lock("busy").lock();
        holder.fairLock("busy-fair").lock();
        Thread plainWaiter = thread("plain waiter", () -> {
            try {
                other.lock("busy").lockInterruptibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread fairWaiter = thread("fair waiter", () -> {
            try {
                other.fairLock("busy-fair").lockInterruptibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Poll.untilWaiting(plainWaiter, TestTimes.millis(5000));
        Poll.untilWaiting(fairWaiter, TestTimes.millis(5000));
        List<LockInfo> infos = holder.inspect("busy");
        assertThat(infos).extracting(LockInfo::name).containsExactlyInAnyOrder("busy", "busy-fair");
        // a plain lock() never queues in the server, and may wait beside queued fair attempts: no count is complete
        assertThat(infos)
                .extracting(LockInfo::waiters)
                .as("waiters of locks someone waits for")
                .containsOnly(-1);
    }

    // ---- readers -------------------------------------------------------------------------------

    @Test
    void anExpiredReaderIsPurgedAndNoLongerBlocksAWriter() throws Exception {
        RedisEngine engine = engine();
        // a first refusal opens the engine's release subscription (and the server learns the scripts), which takes
        // longer than the reader's lease on a cold client: done before the clock starts, so the writer's first
        // answer below comes at once, and a grant before the reader's lease ended would be seen
        Acquisition warmReader = new Acquisition(
                new LockKey(namespace, "warm-up"), LockMode.READ, "w".repeat(32), "reader", Duration.ofSeconds(30));
        Acquisition warmWriter = attempt("warm-up", LockMode.WRITE);
        assertThat(engine.tryAcquire(warmReader)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(engine.tryAcquire(warmWriter)).isInstanceOf(AcquireResult.Busy.class);
        assertThat(engine.release(warmReader)).isTrue();
        assertThat(engine.tryAcquire(warmWriter)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(engine.release(warmWriter)).isTrue();
        Acquisition reader = new Acquisition(
                new LockKey(namespace, "stale-reader"),
                LockMode.READ,
                "r".repeat(32),
                "reader",
                Duration.ofMillis(300));
        long grantedAt = System.nanoTime();
        long readerFence = ((AcquireResult.Granted) engine.tryAcquire(reader)).fencingToken();
        Acquisition writer = attempt("stale-reader", LockMode.WRITE);
        assertThat(engine.tryAcquire(writer)).isInstanceOf(AcquireResult.Busy.class);
        AcquireResult[] polled = new AcquireResult[1];
        Poll.until(
                "the writer to be granted once the reader's lease of 300 ms is over",
                TestTimes.millis(5_000),
                () -> (polled[0] = engine.tryAcquire(writer)) instanceof AcquireResult.Granted);
        assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
                .as("not before the reader's lease ended")
                .isGreaterThanOrEqualTo(Duration.ofMillis(250));
        AcquireResult result = polled[0];
        assertThat(((AcquireResult.Granted) result).fencingToken()).isGreaterThan(readerFence);
        assertThat(engine.renew(reader)).as("the expired reader cannot renew").isFalse();
        assertThat(engine.release(writer)).isTrue();
    }

    // ---- failures ------------------------------------------------------------------------------

    @Test
    void aForeignDeleteIsNoticedAtTheNextRenewal() throws Exception {
        DistributedLock lock = client(Duration.ofMillis(600)).lock("deleted");
        lock.lock();
        CountDownLatch lost = new CountDownLatch(1);
        lock.lease().onLost((lease, reason) -> lost.countDown());
        server.admin().del(LockKeys.of(new LockKey(namespace, "deleted")).owner());
        assertThat(lost.await(TestTimes.millis(1500).toMillis(), TimeUnit.MILLISECONDS))
                .as("loss noticed")
                .isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("'deleted'");
    }

    @Test
    void anAcquireCutOffByADroppedConnectionFailsAtOnceNotAfterTheCommandTimeout() throws Exception {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", server.port());
                Cerberus cerberus = Cerberus.builder()
                        .engine("redis://127.0.0.1:" + proxy.port() + "?timeout=20s")
                        .build()) {
            assertThat(cerberus.lock("warm").tryLock()).isTrue();
            cerberus.lock("warm").unlock();
            proxy.mode(FaultProxy.Mode.BLACKHOLE); // the request goes out, no answer comes back
            java.util.concurrent.BlockingQueue<Object> outcome = new java.util.concurrent.LinkedBlockingQueue<>();
            Thread caller = new Thread(() -> {
                try {
                    outcome.add(cerberus.lock("in-flight").tryLock());
                } catch (RuntimeException e) {
                    outcome.add(e);
                }
            });
            caller.start();
            Poll.untilWaiting(caller, TestTimes.millis(5_000));
            long dropped = System.nanoTime();
            proxy.mode(FaultProxy.Mode.DROP); // the connection is reset, as when the server dies
            Object failed = outcome.poll(TestTimes.millis(5_000).toMillis(), TimeUnit.MILLISECONDS);
            // its withdrawal waits for the reconnect in the background, not in the caller
            assertThat(failed)
                    .as("the call ended well before its 20 s command timeout")
                    .isInstanceOf(EngineUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - dropped)).isLessThan(TestTimes.millis(5_000));
            proxy.mode(FaultProxy.Mode.PASS);
            Poll.until("the client to reconnect", TestTimes.millis(10_000), () -> {
                try {
                    return cerberus.lock("after").tryLock();
                } catch (EngineUnavailableException e) {
                    return false;
                }
            });
            cerberus.lock("after").unlock();
            assertThat(cerberus.lock("in-flight").isLocked())
                    .as("the acquire given up on was not sent again after the reconnect")
                    .isFalse();
            caller.join(5_000);
        }
    }

    @Test
    void aPasswordWithoutAUserIsNeverShown() {
        try (RedisWithAdmin secured = RedisWithAdmin.start("--requirepass", "s3cret");
                Cerberus cerberus = Cerberus.builder()
                        .engine("redis://s3cret@127.0.0.1:" + secured.port())
                        .build()) {
            assertThat(cerberus.lock("guarded").tryLock())
                    .as("the bare user-info is the password")
                    .isTrue();
            assertThat(cerberus.toString())
                    .contains("redis://****@127.0.0.1:" + secured.port())
                    .doesNotContain("s3cret");
            assertThat(cerberus.currentEngineUri()).doesNotContain("s3cret");
        }
        int closed = io.cerberus.servers.FreePorts.next();
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("redis://s3cret@127.0.0.1:" + closed)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("redis://****@127.0.0.1:" + closed)
                .satisfies(e -> assertThat(String.valueOf(e.getCause())).doesNotContain("s3cret"))
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void wrongPasswordSaysSoWithoutShowingIt() {
        try (RedisWithAdmin secured = RedisWithAdmin.start("--requirepass", "s3cret")) {
            String wrong = "redis://:wrong-pass@127.0.0.1:" + secured.port();
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(wrong)
                            .connectTimeout(Duration.ofSeconds(2))
                            .build())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("redis://****@127.0.0.1:" + secured.port())
                    .hasMessageContaining("password")
                    .hasMessageNotContaining("wrong-pass");
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(secured.uri())
                            .connectTimeout(Duration.ofSeconds(2))
                            .build())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(secured.uri())
                    .hasMessageContaining("password");
            try (Cerberus right = Cerberus.builder()
                    .engine("redis://:s3cret@127.0.0.1:" + secured.port())
                    .build()) {
                assertThat(right.lock("auth").tryLock()).isTrue();
                right.lock("auth").unlock();
            }
        }
    }

    @Test
    void credentialsFromTheOptionsReplaceTheUris() {
        try (RedisWithAdmin secured = RedisWithAdmin.start("--requirepass", "s3cret")) {
            String uri = "redis://:stale@127.0.0.1:" + secured.port();
            RedisOptions right =
                    RedisOptions.builder().password("s3cret".toCharArray()).build();
            try (Cerberus cerberus = Cerberus.builder().engine(uri, right).build()) {
                assertThat(cerberus.lock("auth").tryLock()).isTrue();
                cerberus.lock("auth").unlock();
            }
            RedisOptions wrong =
                    RedisOptions.builder().password("nope".toCharArray()).build();
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(secured.uri(), wrong)
                            .connectTimeout(Duration.ofSeconds(2))
                            .build())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("refused the user or password")
                    .hasMessageNotContaining("nope");
            assertThat(wrong.toString()).doesNotContain("nope");
            assertThatThrownBy(() -> RedisOptions.builder().user("app").build())
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void badUrisAreRejectedWithTheRule() {
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(server.uri() + "?waitReplicas=-1")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitReplicas")
                .hasMessageContaining("whole number from 0 to 1000");
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine(server.uri() + "?waitTimeout=soon")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitTimeout");
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("redis-cluster://127.0.0.1:1,,127.0.0.1:2")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty host");
        assertThatThrownBy(() ->
                        Cerberus.builder().engine(server.uri() + "?tiemout=5s").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'tiemout'");
    }

    @Test
    void killedServerLosesTheLockVisiblyAndARestartedOneServesAgain() throws Exception {
        try (RedisWithAdmin own = RedisWithAdmin.start()) {
            Duration lease = Duration.ofMillis(800);
            Cerberus cerberus = Cerberus.builder()
                    .engine(own.uri())
                    .namespace(namespace)
                    .defaultLease(lease)
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            closeAfter.add(cerberus);
            DistributedLock lock = cerberus.lock("server-dies");
            lock.lock();
            CountDownLatch lost = new CountDownLatch(1);
            lock.lease().onLost((l, reason) -> lost.countDown());
            own.kill();
            long killedAt = System.nanoTime();
            assertThat(lost.await(lease.plus(TestTimes.millis(1000)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the holder is told within its lease")
                    .isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(lease.plus(TestTimes.millis(1000)));
            assertThat(lock.lease().isValid()).isFalse();
            assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);

            own.restart();
            Poll.until("the client to serve locks again", TestTimes.millis(5000), () -> {
                try (Lease lease2 = cerberus.lock("server-dies").acquire(Duration.ZERO)) {
                    return lease2.isValid();
                } catch (RuntimeException e) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            });
        }
    }
}
