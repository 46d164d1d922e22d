package io.cerberus.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockInfo;
import io.cerberus.LockLostException;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ZooKeeper-specific behaviour on real servers: no herd, FIFO, sessions across restarts, per-app ACLs, bad URIs. */
class ZooKeeperEngineTest {
    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> SERVER = ServerExtension.perClass(ZooKeeperServer::start);

    /** @return a started plain Curator client on the shared server, authenticated with a ZooKeeper digest {@code user:password} */
    private static org.apache.curator.framework.CuratorFramework digestClient(String userAndPassword) {
        org.apache.curator.framework.CuratorFramework client =
                org.apache.curator.framework.CuratorFrameworkFactory.builder()
                        .connectString("127.0.0.1:" + SERVER.get().port())
                        .retryPolicy(new org.apache.curator.retry.RetryNTimes(3, 100))
                        .authorization("digest", userAndPassword.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                        .build();
        client.start();
        return client;
    }

    private static Cerberus client(ZooKeeperServer on, String query, String namespace) {
        return client(on, query, namespace, Duration.ofSeconds(5));
    }

    private static Cerberus client(ZooKeeperServer on, String query, String namespace, Duration connectTimeout) {
        return Cerberus.builder()
                .engine(on.uri() + "/engine-test" + query)
                .namespace(namespace)
                .connectTimeout(connectTimeout)
                .build();
    }

    /**
     * @return a client under {@code root}, a root of its own: the shared {@code /engine-test} may be made world-open by
     *     a client without credentials, which a client with credentials refuses
     */
    private static Cerberus tenant(String root, String query, String namespace) {
        return Cerberus.builder()
                .engine(SERVER.get().uri() + root + query)
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** @return whether the thread waits inside ZooKeeper's synchronous API for an answer */
    private static boolean awaitsZooKeeperOnItsOwnThread(Thread thread) {
        return Arrays.stream(thread.getStackTrace())
                .anyMatch(frame -> frame.getClassName().equals("org.apache.zookeeper.ClientCnxn")
                        && frame.getMethodName().equals("submitRequest"));
    }

    @Test
    void waitersDrainInArrivalOrderAndEachReleaseWakesOneWaiter() throws Exception {
        int waiters = 100;
        String namespace = "herd-" + UUID.randomUUID();
        try (Cerberus cerberus = client(SERVER.get(), "", namespace)) {
            DistributedLock first = cerberus.fairLock("queue");
            first.lock();
            List<Integer> order = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                int index = i;
                Thread thread = new Thread(
                        () -> {
                            DistributedLock lock = cerberus.fairLock("queue");
                            lock.lock();
                            order.add(index);
                            lock.unlock();
                        },
                        "waiter-" + i);
                threads.add(thread);
                thread.start();
                Poll.untilWaiting(thread, TestTimes.millis(10_000));
            }
            long before = ZooKeeperEngine.WAKE_UPS.get();
            first.unlock();
            for (Thread thread : threads) {
                thread.join(TestTimes.millis(60_000).toMillis());
            }
            long wakeUps = ZooKeeperEngine.WAKE_UPS.get() - before;
            System.out.println(
                    waiters + " waiters, " + waiters + " releases that let one move: " + wakeUps + " wake-ups");
            assertThat(order).hasSize(waiters);
            assertThat(order).isSorted();
            assertThat(wakeUps).as("one wake-up per release, no herd").isLessThanOrEqualTo(waiters);
        }
    }

    /** @return this class's server's engine, opened directly, under the shared root */
    private static ZooKeeperEngine engine() {
        return (ZooKeeperEngine) Engines.open(SERVER.get().uri() + "/engine-test", Duration.ofSeconds(5));
    }

    private static Acquisition attempt(String namespace, String name) {
        return new Acquisition(
                new LockKey(namespace, name),
                LockMode.EXCLUSIVE,
                UUID.randomUUID().toString().replace("-", ""),
                "test",
                Duration.ofSeconds(30));
    }

    @Test
    void aReleaseByAnotherClientCallsAnAsyncWaitersCallbackOnce() throws Exception {
        String namespace = "notify-" + UUID.randomUUID();
        try (ZooKeeperEngine holderEngine = engine();
                ZooKeeperEngine engine = engine()) {
            Acquisition holder = attempt(namespace, "notify");
            assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition waiter = attempt(namespace, "notify");
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
            AtomicInteger calls = new AtomicInteger();
            CountDownLatch woken = new CountDownLatch(1);
            NotifiesChanges.ChangeWatch watch = engine.onChange(waiter, () -> {
                calls.incrementAndGet();
                woken.countDown();
            });
            assertThat(engine.changeCallbacks()).isEqualTo(1);

            assertThat(holderEngine.release(holder)).isTrue();
            assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("woken by the release")
                    .isTrue();
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
            watch.cancel();
            assertThat(calls).as("calls of one registration").hasValue(1);
            assertThat(engine.changeCallbacks()).isZero();
            assertThat(engine.release(waiter)).isTrue();
        }
    }

    @Test
    void cancelledAsyncWaitsLeaveNoCallbackBehind() throws Exception {
        String namespace = "notify-" + UUID.randomUUID();
        try (ZooKeeperEngine holderEngine = engine();
                ZooKeeperEngine engine = engine()) {
            Acquisition holder = attempt(namespace, "notify-cancel");
            assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition waiter = attempt(namespace, "notify-cancel");
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
            AtomicInteger cancelledCalls = new AtomicInteger();
            for (int i = 0; i < 1000; i++) {
                engine.onChange(waiter, cancelledCalls::incrementAndGet).cancel();
            }
            assertThat(engine.changeCallbacks())
                    .as("callbacks left by 1,000 cancelled waits")
                    .isZero();

            CountDownLatch woken = new CountDownLatch(1);
            engine.onChange(waiter, woken::countDown);
            assertThat(holderEngine.release(holder)).isTrue();
            assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("a live callback woken by the release")
                    .isTrue();
            assertThat(cancelledCalls).as("cancelled callbacks called").hasValue(0);
            assertThat(engine.changeCallbacks()).isZero();
            engine.abandon(waiter);
        }
    }

    @Test
    void anUncontendedLockAndUnlockIsTwoRequests() throws Exception {
        try (Cerberus cerberus = client(SERVER.get(), "", "requests-" + UUID.randomUUID())) {
            DistributedLock lock = cerberus.lock("alone");
            lock.lock(); // the first acquisition also creates the lock's node
            lock.unlock();
            int cycles = 200;
            long before = packetsReceived(SERVER.get());
            for (int i = 0; i < cycles; i++) {
                lock.lock();
                lock.unlock();
            }
            double perCycle = (double) (packetsReceived(SERVER.get()) - before) / cycles;
            System.out.println("uncontended lock and unlock: " + perCycle + " packets received per cycle (pings too)");
            assertThat(perCycle)
                    .as("the create-and-write transaction, the delete; no listing")
                    .isLessThan(2.2);
        }
    }

    @Test
    void aHolderWhoseWatchedNodeIsFreedByForceLearnsFromTheWatch() throws Exception {
        String namespace = "forced-" + UUID.randomUUID();
        try (Cerberus holder = client(SERVER.get(), "", namespace);
                Cerberus operator = client(SERVER.get(), "", namespace)) {
            long watchedBefore = HoldWatches.WATCHED.get();
            Lease stuck = holder.lock("stuck").acquire(Duration.ZERO);
            Poll.until(
                    "the hold's node is watched once it lasts",
                    TestTimes.millis(10_000),
                    () -> HoldWatches.WATCHED.get() > watchedBefore);
            assertThat(stuck.isValid()).isTrue();

            assertThat(operator.forceRelease("stuck", stuck.fencingToken())).isTrue();

            // nothing is renewed on ZooKeeper: only the watch can tell the holder
            Poll.until("the holder learns it lost the lock", TestTimes.millis(5_000), () -> !stuck.isValid());
            assertThatThrownBy(stuck::close).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void theFencingTokenOfAnUncontendedHoldIsItsNodesCreatingTransaction() throws Exception {
        try (Cerberus cerberus = client(SERVER.get(), "", "fence-" + UUID.randomUUID())) {
            long previous = 0;
            for (int i = 0; i < 3; i++) {
                try (Lease lease = cerberus.lock("fenced").acquire(Duration.ZERO)) {
                    // inspect reads the czxid from the node's own stat
                    assertThat(cerberus.inspect(""))
                            .singleElement()
                            .satisfies(info -> assertThat(info.fencingToken()).isEqualTo(lease.fencingToken()));
                    assertThat(lease.fencingToken()).isGreaterThan(previous);
                    previous = lease.fencingToken();
                }
            }
        }
    }

    @Test
    void aLockWhoseNodeWasDeletedMeanwhileIsTakenAgain() throws Exception {
        String namespace = "recreated-" + UUID.randomUUID();
        try (Cerberus cerberus = client(SERVER.get(), "", namespace);
                CuratorFramework admin = admin()) {
            DistributedLock lock = cerberus.lock("gone");
            lock.lock();
            long fence = lock.lease().fencingToken();
            lock.unlock();
            // what the ensemble does to an empty container, or an operator to an unused lock
            admin.delete().forPath(LockPaths.lock("/engine-test", new LockKey(namespace, "gone")));
            lock.lock();
            assertThat(lock.lease().fencingToken()).isGreaterThan(fence);
            lock.unlock();
        }
    }

    @Test
    void aLockNodeThatMayNotBeWrittenIsStillTakenWithACreateAndAListing() throws Exception {
        String namespace = "unwritable-" + UUID.randomUUID();
        try (Cerberus cerberus = client(SERVER.get(), "", namespace);
                CuratorFramework admin = admin()) {
            // nodes may be created in it and deleted from it, but it may not be written: the one-request claim fails
            admin.create()
                    .creatingParentsIfNeeded()
                    .withACL(List.of(new ACL(
                            ZooDefs.Perms.READ | ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE,
                            ZooDefs.Ids.ANYONE_ID_UNSAFE)))
                    .forPath(LockPaths.lock("/engine-test", new LockKey(namespace, "read-only")));
            DistributedLock lock = cerberus.lock("read-only");
            lock.lock();
            try (Cerberus other = client(SERVER.get(), "", namespace)) {
                assertThat(other.lock("read-only").tryLock()).as("held").isFalse();
            }
            lock.unlock();
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void anAcquireInterruptedWhileItsRequestIsUnansweredKeepsOneNodeAndTheInterrupt() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
                Cerberus cerberus = client(own, "?sessionTimeout=20s", "interrupted");
                CuratorFramework admin = admin(own)) {
            String dir = LockPaths.lock("/engine-test", new LockKey("interrupted", "taken"));
            DistributedLock lock = cerberus.lock("taken");
            lock.lock(); // creates the lock's node: the acquisition below is the one-request claim
            lock.unlock();
            AtomicBoolean interruptKept = new AtomicBoolean();
            AtomicReference<List<String>> nodesWhileHeld = new AtomicReference<>();
            CountDownLatch counted = new CountDownLatch(1);
            Thread taker = new Thread(
                    () -> {
                        lock.lock();
                        interruptKept.set(Thread.interrupted());
                        try {
                            nodesWhileHeld.set(admin.getChildren().forPath(dir));
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        } finally {
                            counted.countDown();
                            lock.unlock();
                        }
                    },
                    "taker");
            own.pause();
            try {
                taker.start();
                Poll.until(
                        "the taker waits for the claim's answer on its own thread",
                        TestTimes.millis(10_000),
                        () -> awaitsZooKeeperOnItsOwnThread(taker));
                taker.interrupt();
            } finally {
                own.resume();
            }
            taker.join(TestTimes.millis(20_000).toMillis());
            assertThat(counted.getCount()).as("the taker got the lock").isZero();
            assertThat(interruptKept).as("the interrupt is kept for the caller").isTrue();
            assertThat(nodesWhileHeld.get())
                    .as("the unanswered claim's node, and no other")
                    .hasSize(1);
            assertThat(admin.getChildren().forPath(dir))
                    .as("nothing left after the release")
                    .isEmpty();
        }
    }

    @Test
    void aReleaseInterruptedWhileItsRequestIsUnansweredStillFreesTheLock() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
                Cerberus cerberus = client(own, "?sessionTimeout=20s", "interrupted");
                Cerberus other = client(own, "?sessionTimeout=20s", "interrupted")) {
            Lease lease = cerberus.lock("released").acquire(Duration.ZERO);
            AtomicBoolean interruptKept = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread closer = new Thread(
                    () -> {
                        try {
                            lease.close();
                        } catch (Throwable e) {
                            failure.set(e);
                        }
                        interruptKept.set(Thread.interrupted());
                    },
                    "closer");
            own.pause();
            try {
                closer.start();
                Poll.until(
                        "the closer waits for the delete's answer on its own thread",
                        TestTimes.millis(10_000),
                        () -> awaitsZooKeeperOnItsOwnThread(closer));
                closer.interrupt();
            } finally {
                own.resume();
            }
            closer.join(TestTimes.millis(20_000).toMillis());
            assertThat(failure.get()).as("the release succeeded").isNull();
            assertThat(interruptKept).as("the interrupt is kept for the caller").isTrue();
            assertThat(other.lock("released").tryLock()).as("free").isTrue();
            other.lock("released").unlock();
        }
    }

    @Test
    void aRequestTheEnsembleDoesNotAnswerFailsAfterTheConnectTimeoutAndTheClientReconnects() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
                Cerberus cerberus = client(own, "?sessionTimeout=20s", "unanswered", Duration.ofSeconds(1))) {
            DistributedLock lock = cerberus.lock("slow");
            lock.lock();
            lock.unlock();
            long start = System.nanoTime();
            own.pause();
            try {
                assertThatThrownBy(lock::tryLock)
                        .isInstanceOf(EngineUnavailableException.class)
                        .hasMessageContaining("did not answer within 1000ms")
                        .hasMessageContaining(own.uri());
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .as("bounded by the connect timeout")
                        .isLessThan(Duration.ofSeconds(1).plus(TestTimes.millis(3_000)));
            } finally {
                own.resume();
            }
            Poll.until("the client takes a lock again once the server answers", TestTimes.millis(20_000), () -> {
                try {
                    DistributedLock again = cerberus.lock("after");
                    if (again.tryLock()) {
                        again.unlock();
                        return true;
                    }
                    return false;
                } catch (EngineUnavailableException e) {
                    return false;
                }
            });
        }
    }

    /** @return the packets the server has received since it started (requests and pings), from {@code srvr} */
    private static long packetsReceived(ZooKeeperServer on) {
        return Long.parseLong(on.srvr().get("Received"));
    }

    private static CuratorFramework admin() throws InterruptedException {
        return admin(SERVER.get());
    }

    private static CuratorFramework admin(ZooKeeperServer on) throws InterruptedException {
        CuratorFramework admin =
                CuratorFrameworkFactory.newClient(on.uri().substring("zk://".length()), new RetryNTimes(3, 100));
        admin.start();
        admin.blockUntilConnected();
        return admin;
    }

    /** Waiters of other clients each queue a node; a client's own threads line up in it and queue one. */
    @Test
    void inspectCountsHoldersAndWaiters() throws Exception {
        String namespace = "inspect-" + UUID.randomUUID();
        try (Cerberus cerberus = client(SERVER.get(), "", namespace);
                Cerberus second = client(SERVER.get(), "", namespace);
                Cerberus third = client(SERVER.get(), "", namespace)) {
            DistributedLock lock = cerberus.lock("busy");
            lock.lock();
            List<Thread> threads = new ArrayList<>();
            for (Cerberus waiting : List.of(second, third, third)) {
                Thread thread = new Thread(() -> {
                    try {
                        waiting.lock("busy").tryAcquire(Duration.ofSeconds(30)).ifPresent(Lease::close);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                threads.add(thread);
                thread.start();
                Poll.untilWaiting(thread, TestTimes.millis(10_000));
            }
            List<LockInfo> infos = cerberus.inspect("");
            assertThat(infos).singleElement().satisfies(info -> {
                assertThat(info.name()).isEqualTo("busy");
                assertThat(info.waiters())
                        .as("one queued node per waiting client")
                        .isEqualTo(2);
                assertThat(info.leaseRemaining()).isEmpty();
                assertThat(info.holder())
                        .contains(Long.toString(ProcessHandle.current().pid()));
            });
            lock.unlock();
            for (Thread thread : threads) {
                thread.join(10_000);
            }
        }
    }

    @Test
    void aServerRestartedWithinTheSessionTimeoutKeepsTheLock() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
                Cerberus holder = client(own, "?sessionTimeout=20s", "restart");
                Cerberus other = client(own, "?sessionTimeout=20s", "restart")) {
            Lease lease = holder.lock("kept").acquire(Duration.ZERO);
            own.kill();
            Poll.until(
                    "the lease is uncertain while the server is down",
                    TestTimes.millis(10_000),
                    () -> !lease.isValid());
            own.restart();
            Poll.until("the lease is confirmed once the session is back", TestTimes.millis(20_000), lease::isValid);
            assertThat(other.lock("kept").tryLock()).as("still held").isFalse();
            lease.close();
            assertThat(other.lock("kept").tryLock()).isTrue();
            other.lock("kept").unlock();
        }
    }

    @Test
    void aServerDownLongerThanTheSessionLosesTheLockAndTheNextHolderHasALargerFence() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
                Cerberus holder = client(own, "?sessionTimeout=1s", "expiry")) {
            Lease lease = holder.lock("expires").acquire(Duration.ZERO);
            long fence = lease.fencingToken();
            CountDownLatch lost = new CountDownLatch(1);
            lease.onLost((l, reason) -> lost.countDown());
            own.kill();
            Thread.sleep(TestTimes.millis(3_000).toMillis()); // the outage itself is the fault: longer than the session
            own.restart();
            assertThat(lost.await(TestTimes.millis(30_000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("loss signalled")
                    .isTrue();
            try (Cerberus next = client(own, "?sessionTimeout=5s", "expiry")) {
                Lease taken = next.lock("expires").acquire(TestTimes.millis(10_000));
                assertThat(taken.fencingToken()).isGreaterThan(fence);
                taken.close();
            }
        }
    }

    /**
     * A listing through a member that is behind may still show a node of the client's expired
     * session (a soak saw it after a leader change on a loaded ensemble). The attempt that made
     * the node must not be granted on it with its old fencing token: it queues again in the new
     * session. The member behind is modelled by a node put back at the old node's path, and the
     * engine's own view of the expiry (Curator's LOST event) is held back, as in that soak, by a
     * listener that runs before the engine's.
     */
    @Test
    void aNodeOfAnEndedSessionIsNotGrantedThoughAListingStillShowsIt() throws Exception {
        String connect = "127.0.0.1:" + SERVER.get().port();
        String root = "/stale-session-" + UUID.randomUUID();
        CountDownLatch lostSeen = new CountDownLatch(1);
        CountDownLatch letLostThrough = new CountDownLatch(1);
        try (CuratorFramework mine =
                        CuratorFrameworkFactory.newClient(connect, 10_000, 5_000, new RetryNTimes(20, 100));
                CuratorFramework theirs = CuratorFrameworkFactory.newClient(connect, new RetryNTimes(3, 100))) {
            mine.getConnectionStateListenable().addListener((client, state) -> {
                if (state == org.apache.curator.framework.state.ConnectionState.LOST) {
                    lostSeen.countDown();
                    try {
                        letLostThrough.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            mine.start();
            theirs.start();
            assertThat(mine.blockUntilConnected(10, TimeUnit.SECONDS)
                            && theirs.blockUntilConnected(10, TimeUnit.SECONDS))
                    .isTrue();
            ZooKeeperEngine engine = new ZooKeeperEngine(
                    "zk mine", root, mine, false, (token, reason) -> {}, Duration.ofSeconds(10), null);
            ZooKeeperEngine other = new ZooKeeperEngine(
                    "zk theirs", root, theirs, false, (token, reason) -> {}, Duration.ofSeconds(10), null);
            try {
                LockKey key = new LockKey("ns", "lock");
                io.cerberus.spi.Acquisition holder = new io.cerberus.spi.Acquisition(
                        key,
                        io.cerberus.spi.LockMode.EXCLUSIVE,
                        UUID.randomUUID().toString().replace("-", ""),
                        "holder",
                        Duration.ofSeconds(30));
                io.cerberus.spi.Acquisition waiter = new io.cerberus.spi.Acquisition(
                        key,
                        io.cerberus.spi.LockMode.EXCLUSIVE,
                        UUID.randomUUID().toString().replace("-", ""),
                        "waiter",
                        Duration.ofSeconds(30));
                assertThat(other.tryAcquire(holder)).isInstanceOf(io.cerberus.spi.AcquireResult.Granted.class);
                assertThat(engine.tryAcquire(waiter)).isInstanceOf(io.cerberus.spi.AcquireResult.Busy.class);
                String dir = LockPaths.lock(root, key);
                String oldNode = dir + "/"
                        + theirs.getChildren().forPath(dir).stream()
                                .filter(child -> child.startsWith(
                                        LockPaths.nodePrefix(io.cerberus.spi.LockMode.EXCLUSIVE, waiter.token())))
                                .findFirst()
                                .orElseThrow();
                long oldFence = theirs.checkExists().forPath(oldNode).getCzxid();

                long oldSession = mine.getZookeeperClient().getZooKeeper().getSessionId();
                expire(mine, connect);
                assertThat(lostSeen.await(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
                        .as("the session expired")
                        .isTrue();
                Poll.until("a new session", TestTimes.millis(20_000), () -> {
                    try {
                        return mine.getZookeeperClient().isConnected()
                                && mine.getZookeeperClient().getZooKeeper().getSessionId() != oldSession;
                    } catch (Exception e) {
                        return false;
                    }
                });
                other.release(holder);
                theirs.create().forPath(oldNode); // what a member behind would still list, first in line

                io.cerberus.spi.AcquireResult late = engine.tryAcquire(waiter);
                if (late instanceof io.cerberus.spi.AcquireResult.Granted granted) {
                    assertThat(granted.fencingToken())
                            .as("granted on a node of the new session, not the old one's token")
                            .isGreaterThan(oldFence);
                }
                theirs.delete().forPath(oldNode);
                io.cerberus.spi.AcquireResult now =
                        late instanceof io.cerberus.spi.AcquireResult.Granted ? late : engine.tryAcquire(waiter);
                assertThat(now).isInstanceOf(io.cerberus.spi.AcquireResult.Granted.class);
                assertThat(((io.cerberus.spi.AcquireResult.Granted) now).fencingToken())
                        .isGreaterThan(oldFence);
                engine.release(waiter);
            } finally {
                letLostThrough.countDown();
                engine.close();
                other.close();
            }
        }
    }

    /** Ends {@code client}'s session as the ensemble does at a timeout: a second handle on the same session closes it. */
    private static void expire(CuratorFramework client, String connect) throws Exception {
        org.apache.zookeeper.ZooKeeper handle = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        org.apache.zookeeper.ZooKeeper twin = new org.apache.zookeeper.ZooKeeper(
                connect,
                10_000,
                event -> {
                    if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                handle.getSessionId(),
                handle.getSessionPasswd());
        assertThat(connected.await(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                .as("a second handle on the session")
                .isTrue();
        twin.close();
    }

    @Test
    void aNamespaceNodeSomeoneElseCreatedFirstIsRefusedNotUsed() throws Exception {
        String root = "/tenants-" + UUID.randomUUID();
        String worldOpen = "squatted-" + UUID.randomUUID();
        String foreign = "taken-" + UUID.randomUUID();
        try (org.apache.curator.framework.CuratorFramework anyone = digestClient("mallory:nothing");
                org.apache.curator.framework.CuratorFramework appB = digestClient("app-b:secret-b")) {
            anyone.create()
                    .withACL(List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
                    .forPath(root); // as the engine makes a root: anyone may create a namespace in it first
            anyone.create()
                    .withACL(org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE)
                    .forPath(LockPaths.namespace(root, worldOpen));
            appB.create()
                    .withACL(org.apache.zookeeper.ZooDefs.Ids.CREATOR_ALL_ACL)
                    .forPath(LockPaths.namespace(root, foreign));
        }
        for (String namespace : List.of(worldOpen, foreign)) {
            try (Cerberus appA = tenant(root, "?user=app-a&password=secret-a", namespace)) {
                assertThatThrownBy(() -> appA.lock("order:1").tryLock())
                        .as(namespace)
                        .isInstanceOf(EngineUnavailableException.class)
                        .hasMessageContaining("not this application's own")
                        .hasMessageContaining(namespace)
                        .hasMessageNotContaining("secret-a");
                assertThatThrownBy(() -> appA.idempotency(io.cerberus.idempotency.IdempotencyOptions.defaults()
                                        .withStoreAttempts(1))
                                .execute(
                                        io.cerberus.idempotency.IdempotencyKey.ofContent("charge", 1),
                                        Duration.ofHours(1),
                                        () -> "ran"))
                        .as("its records too")
                        .isInstanceOf(io.cerberus.idempotency.IdempotencyStoreUnavailableException.class);
            }
        }
        try (Cerberus own = tenant(root, "?user=app-a&password=secret-a", "own-" + UUID.randomUUID())) {
            assertThat(own.lock("order:1").tryLock())
                    .as("a namespace the application creates itself")
                    .isTrue();
            own.lock("order:1").unlock();
        }
    }

    @Test
    void appsWithTheirOwnUsersCannotTakeReleaseOrBlockEachOthersLocks() throws Exception {
        String root = "/tenants-" + UUID.randomUUID();
        String namespace = "app-a-" + UUID.randomUUID();
        try (Cerberus appA = tenant(root, "?user=app-a&password=secret-a", namespace);
                Cerberus appB = tenant(root, "?user=app-b&password=secret-b", namespace);
                Cerberus ownNamespace = tenant(root, "?user=app-b&password=secret-b", "app-b-" + UUID.randomUUID())) {
            DistributedLock lock = appA.lock("order:1");
            lock.lock();
            assertThatThrownBy(() -> appB.lock("order:1").tryLock())
                    .as("A's namespace is not B's")
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("not this application's own")
                    .hasMessageNotContaining("secret-b");
            assertThatThrownBy(() -> appB.inspect("")).isInstanceOf(EngineUnavailableException.class);
            // B, with its own credentials, cannot release A's hold by deleting its node, list, read or rewrite it
            String lockDir = LockPaths.lock(root, new io.cerberus.spi.LockKey(namespace, "order:1"));
            try (org.apache.curator.framework.CuratorFramework asA = digestClient("app-a:secret-a");
                    org.apache.curator.framework.CuratorFramework asB = digestClient("app-b:secret-b")) {
                List<String> holds = asA.getChildren().forPath(lockDir);
                assertThat(holds).as("A's hold node").hasSize(1);
                assertThatThrownBy(() -> asB.delete().forPath(lockDir + "/" + holds.get(0)))
                        .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> asB.getChildren().forPath(lockDir))
                        .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
                String hold = lockDir + "/" + holds.get(0);
                assertThatThrownBy(() -> asB.getData().forPath(hold))
                        .as("reading A's hold")
                        .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
                assertThatThrownBy(
                                () -> asB.setData().forPath(hold, asA.getData().forPath(hold)))
                        .as("rewriting (extending) A's hold")
                        .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
                assertThat(asA.getChildren().forPath(lockDir))
                        .as("A's hold is still there")
                        .isEqualTo(holds);
            }
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            lock.unlock();
            assertThat(appA.lock("order:1").tryLock()).isTrue();
            appA.lock("order:1").unlock();
            assertThat(ownNamespace.lock("order:1").tryLock())
                    .as("B in its own namespace")
                    .isTrue();
            ownNamespace.lock("order:1").unlock();
        }
    }

    @Test
    void withoutASessionTimeoutTheSessionLastsTheDefaultLease() {
        assertThat(ZooKeeperTarget.parse("zk://h:2181", Duration.ofMillis(1500)).sessionTimeout())
                .isEqualTo(Duration.ofMillis(1500));
        assertThat(ZooKeeperTarget.parse("zk://h:2181?sessionTimeout=3s", Duration.ofMillis(1500))
                        .sessionTimeout())
                .as("the URI's own wins")
                .isEqualTo(Duration.ofSeconds(3));
        assertThat(ZooKeeperTarget.parse("zk://h:2181", Duration.ofMillis(20)).sessionTimeout())
                .as("at least 100 ms")
                .isEqualTo(ZooKeeperTarget.MIN_SESSION_TIMEOUT);
    }

    @Test
    void aSessionLongerThanAskedIsWarnedAbout() {
        // the test server's minSessionTimeout is 400 ms
        String namespace = "session-" + UUID.randomUUID();
        try (CapturedLogs logs = CapturedLogs.of(ZooKeeperEngineProvider.class.getName(), java.util.logging.Level.ALL);
                Cerberus shortLease = Cerberus.builder()
                        .engine(SERVER.uri() + "/engine-test")
                        .namespace(namespace)
                        .defaultLease(Duration.ofMillis(200))
                        .build()) {
            assertThat(shortLease.lock("x").tryLock()).isTrue();
            shortLease.lock("x").unlock();
            assertThat(logs.messages(java.util.logging.Level.WARNING))
                    .singleElement()
                    .asString()
                    .contains("granted a session timeout of 400ms where 200ms was asked")
                    .contains("keeps its locks for up to 400ms");
        }
        try (CapturedLogs logs = CapturedLogs.of(ZooKeeperEngineProvider.class.getName(), java.util.logging.Level.ALL);
                Cerberus asGranted = Cerberus.builder()
                        .engine(SERVER.uri() + "/engine-test")
                        .namespace(namespace)
                        .defaultLease(Duration.ofSeconds(2))
                        .build()) {
            assertThat(asGranted.lock("x").tryLock()).isTrue();
            asGranted.lock("x").unlock();
            assertThat(logs.messages(java.util.logging.Level.WARNING))
                    .as("2 s is granted as asked")
                    .isEmpty();
        }
    }

    @Test
    void badUrisAreRejectedWithTheRule() {
        assertThatThrownBy(() -> Cerberus.connect(SERVER.uri() + "?sessionTimeot=5s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'sessionTimeot'");
        assertThatThrownBy(() -> Cerberus.connect(SERVER.uri() + "?user=a"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("both user and password");
        assertThatThrownBy(() -> Cerberus.connect(SERVER.uri() + "?sessionTimeout=soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout");
        assertThatThrownBy(() -> Cerberus.connect("zk://127.0.0.1:1,,127.0.0.1:2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty host");
    }
}
