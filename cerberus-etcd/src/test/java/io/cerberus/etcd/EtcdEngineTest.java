package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.LockInfo;
import io.cerberus.LockLostException;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.FaultProxy;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.NotifiesChanges;
import io.cerberus.spi.RenewsInBatches;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** etcd-specific cases beside the conformance suite, against a real etcd. */
class EtcdEngineTest {
    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    private static String token() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    private static Acquisition attempt(LockKey key) {
        return new Acquisition(key, LockMode.EXCLUSIVE, token(), "test", Duration.ofSeconds(30));
    }

    @Test
    void anEtcdThatRefusesConnectionsFailsAtOnceNamingIt() {
        String uri = "etcd://127.0.0.1:" + io.cerberus.servers.FreePorts.next() + "/down";
        long start = System.nanoTime();
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Cerberus.builder().engine(uri).build())
                .isInstanceOf(io.cerberus.EngineUnavailableException.class)
                .hasMessageContaining(uri)
                .hasMessageContaining("no member accepts connections")
                .hasMessageContaining("refused");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("not the 10 s connect timeout")
                .isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void aReleaseByAnotherClientCallsAnAsyncWaitersCallbackOnce() throws Exception {
        LockKey name = new LockKey("notify-" + token().substring(0, 8), "notify");
        try (EtcdEngine holderEngine = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5));
                EtcdEngine engine = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            Acquisition holder = attempt(name);
            assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition waiter = attempt(name);
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
            AtomicInteger calls = new AtomicInteger();
            CountDownLatch woken = new CountDownLatch(1);
            NotifiesChanges.ChangeWatch watch = engine.onChange(waiter, () -> {
                calls.incrementAndGet();
                woken.countDown();
            });
            assertThat(engine.changeWatches()).isEqualTo(1);

            assertThat(holderEngine.release(holder)).isTrue();
            assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("woken by the release")
                    .isTrue();
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
            watch.cancel();
            assertThat(calls).as("calls of one registration").hasValue(1);
            assertThat(engine.changeWatches()).as("watches left open").isZero();
            assertThat(engine.release(waiter)).isTrue();
        }
    }

    @Test
    void cancelledAsyncWaitsLeaveNoWatchOpen() throws Exception {
        LockKey name = new LockKey("notify-" + token().substring(0, 8), "notify-cancel");
        try (EtcdEngine holderEngine = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5));
                EtcdEngine engine = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            Acquisition holder = attempt(name);
            assertThat(holderEngine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition waiter = attempt(name);
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Busy.class);
            AtomicInteger cancelledCalls = new AtomicInteger();
            for (int i = 0; i < 1000; i++) {
                engine.onChange(waiter, cancelledCalls::incrementAndGet).cancel();
            }
            assertThat(engine.changeWatches())
                    .as("watches left by 1,000 cancelled waits")
                    .isZero();

            CountDownLatch woken = new CountDownLatch(1);
            engine.onChange(waiter, woken::countDown);
            assertThat(holderEngine.release(holder)).isTrue();
            assertThat(woken.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("a live callback woken by the release")
                    .isTrue();
            assertThat(cancelledCalls).as("cancelled callbacks called").hasValue(0);
            Poll.until("the called watch to close", TestTimes.millis(2000), () -> engine.changeWatches() == 0);
            engine.abandon(waiter);
        }
    }

    @Test
    void leaseRevokedFromOutsideLosesTheHolds() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine(SERVER.uri() + "?ttl=3")
                .namespace("revoke")
                .build()) {
            DistributedLock lock = cerberus.lock("revoked");
            lock.lock();
            CountDownLatch lost = new CountDownLatch(1);
            lock.lease().onLost((lease, reason) -> lost.countDown());
            String leases = SERVER.get().ctl("lease", "list");
            String leaseId = leases.lines()
                    .filter(line -> line.matches("[0-9a-f]+"))
                    .reduce((a, b) -> b)
                    .orElseThrow();
            SERVER.get().ctl("lease", "revoke", leaseId);
            assertThat(lost.await(TestTimes.millis(3000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the holder learns within a keep-alive round")
                    .isTrue();
            assertThat(lock.lease().isValid()).isFalse();
            assertThatThrownBy(lock::unlock)
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'revoked'");
            DistributedLock next = cerberus.lock("revoked");
            assertThat(next.tryLock()).as("a new lease serves new holds").isTrue();
            next.unlock();
        }
    }

    /** 20 holds are renewed by reading their keys, 150 by asking the client lease for its keys: both must find the one deleted. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {20, 150})
    void renewalLosesExactlyTheHoldWhoseKeyWasDeleted(int holds) {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            String namespace = "renew-" + holds;
            java.util.List<Acquisition> held = new java.util.ArrayList<>();
            for (int i = 0; i < holds; i++) {
                Acquisition attempt = attempt(new LockKey(namespace, "lock-" + i));
                assertThat(engine.tryAcquire(attempt)).isInstanceOf(AcquireResult.Granted.class);
                held.add(attempt);
            }
            assertThat(engine.ability(RenewsInBatches.class).orElseThrow().renewAll(held))
                    .as("nothing is lost yet")
                    .isEmpty();
            SERVER.get().ctl("del", "--prefix", "cerberus/" + namespace + "/lock-7/");
            assertThat(engine.ability(RenewsInBatches.class).orElseThrow().renewAll(held))
                    .as("the renewal after the delete")
                    .containsExactly(held.get(7));
            assertThat(engine.ability(RenewsInBatches.class).orElseThrow().renewAll(held.subList(8, holds)))
                    .as("the others are still held")
                    .isEmpty();
            held.subList(8, holds)
                    .forEach(attempt -> assertThat(engine.release(attempt)).isTrue());
        }
    }

    @Test
    void staleReleaseRetryCannotDeleteANewerHoldersKey() {
        try (LockEngine first = Engines.open(SERVER.uri(), Duration.ofSeconds(5));
                LockEngine second = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            LockKey key = new LockKey("stale", "released-twice");
            Acquisition old = attempt(key);
            long oldFence = ((AcquireResult.Granted) first.tryAcquire(old)).fencingToken();
            assertThat(first.release(old)).isTrue();
            Acquisition newer = attempt(key);
            AcquireResult granted = second.tryAcquire(newer);
            assertThat(granted).isInstanceOf(AcquireResult.Granted.class);
            assertThat(((AcquireResult.Granted) granted).fencingToken()).isGreaterThan(oldFence);
            assertThat(first.release(old)).as("the retried release").isFalse();
            assertThat(second.isLocked(key))
                    .as("the newer holder keeps its lock")
                    .isTrue();
            assertThat(second.release(newer)).isTrue();
        }
    }

    @Test
    void waiterIsGrantedWhenItsPredecessorGoesWithoutPolling() throws Exception {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            Queued queued = holderAndWaiter(engine, "chain");
            Acquisition holder = queued.holder();
            Acquisition waiter = queued.waiter();
            assertThat(queued.busy().retryWithin())
                    .as("no polling: woken by the watch")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
            Thread releaser = new Thread(() -> engine.release(holder));
            long start = System.nanoTime();
            releaser.start();
            engine.awaitChange(waiter, Duration.ofSeconds(10));
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("woken by the delete")
                    .isLessThan(TestTimes.millis(3000));
            releaser.join();
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.release(waiter)).isTrue();
        }
    }

    /**
     * etcd serves a watch that starts at a past revision from its unsynced group, caught up every 100 ms: a waiter
     * whose read is followed by other writes must not watch from just after its read.
     */
    @Test
    void aWaiterWatchesFromNowEvenWhenOthersWroteSinceItsRead() throws Exception {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            Queued queued = holderAndWaiter(engine, "busy-server");
            Acquisition holder = queued.holder();
            Acquisition waiter = queued.waiter();
            Acquisition elsewhere = attempt(new LockKey("queue", "another"));
            assertThat(engine.tryAcquire(elsewhere))
                    .as("a write after the waiter's read")
                    .isInstanceOf(AcquireResult.Granted.class);
            long watchersBefore = SERVER.get().counter("etcd_debugging_mvcc_watcher_total");
            long slowBefore = SERVER.get().counter("etcd_debugging_mvcc_slow_watcher_total");
            Thread waiting = new Thread(() -> {
                try {
                    engine.awaitChange(waiter, Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            waiting.start();
            long deadline = System.nanoTime() + TestTimes.millis(5000).toNanos();
            while (SERVER.get().counter("etcd_debugging_mvcc_watcher_total") <= watchersBefore
                    && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
            assertThat(SERVER.get().counter("etcd_debugging_mvcc_watcher_total"))
                    .as("the waiter watches")
                    .isGreaterThan(watchersBefore);
            assertThat(SERVER.get().counter("etcd_debugging_mvcc_slow_watcher_total"))
                    .as("not an unsynced watch")
                    .isEqualTo(slowBefore);
            assertThat(waiting.isAlive()).as("its predecessor is still there").isTrue();
            assertThat(engine.release(holder)).isTrue();
            waiting.join(TestTimes.millis(10_000).toMillis());
            assertThat(waiting.isAlive()).as("woken by the delete").isFalse();
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.release(waiter)).isTrue();
            assertThat(engine.release(elsewhere)).isTrue();
        }
    }

    @Test
    void aPredecessorGoneBeforeTheWatchIsInPlaceEndsTheWaitAtOnce() throws Exception {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            Queued queued = holderAndWaiter(engine, "gone-first");
            Acquisition holder = queued.holder();
            Acquisition waiter = queued.waiter();
            assertThat(engine.release(holder))
                    .as("the delete comes before the watch")
                    .isTrue();
            long start = System.nanoTime();
            engine.awaitChange(waiter, Duration.ofSeconds(60));
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("the look at the key after the watch finds it gone")
                    .isLessThan(TestTimes.millis(10_000));
            assertThat(engine.tryAcquire(waiter)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.release(waiter)).isTrue();
        }
    }

    /** A holder granted a lock and a waiter queued behind it, with the waiter's busy answer. */
    private record Queued(Acquisition holder, Acquisition waiter, AcquireResult.Busy busy) {}

    private static Queued holderAndWaiter(LockEngine engine, String name) {
        LockKey key = new LockKey("queue", name);
        Acquisition holder = attempt(key);
        Acquisition waiter = attempt(key);
        assertThat(engine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
        AcquireResult busy = engine.tryAcquire(waiter);
        assertThat(busy).isInstanceOf(AcquireResult.Busy.class);
        return new Queued(holder, waiter, (AcquireResult.Busy) busy);
    }

    @Test
    void inspectListsHoldersAndCountsWaiters() {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            LockKey key = new LockKey("listed", "shared");
            Acquisition reader1 = new Acquisition(key, LockMode.READ, token(), "reader one", Duration.ofSeconds(30));
            Acquisition reader2 = new Acquisition(key, LockMode.READ, token(), "reader two", Duration.ofSeconds(30));
            Acquisition writer = new Acquisition(key, LockMode.WRITE, token(), "writer", Duration.ofSeconds(30));
            assertThat(engine.tryAcquire(reader1)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.tryAcquire(reader2)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.tryAcquire(writer)).isInstanceOf(AcquireResult.Busy.class);
            assertThat(engine.ability(Inspects.class).orElseThrow().inspect("listed", "sh"))
                    .extracting(LockInfo::holder, LockInfo::mode, LockInfo::waiters)
                    .containsExactly(tuple("reader one", "read", 1), tuple("reader two", "read", 1));
            engine.abandon(writer);
            engine.release(reader1);
            engine.release(reader2);
            assertThat(engine.ability(Inspects.class).orElseThrow().inspect("listed", ""))
                    .isEmpty();
        }
    }

    @Test
    void aBlockedWaiterSendsNoRequestsWhileNothingChanges() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(SERVER.uri())
                        .namespace("quiet")
                        .build();
                Cerberus other = Cerberus.builder()
                        .engine(SERVER.uri())
                        .namespace("quiet")
                        .build()) {
            DistributedLock held = cerberus.lock("quiet");
            held.lock();
            DistributedLock waiting = other.lock("quiet");
            long before = SERVER.get().counter("grpc_server_started_total{grpc_method=\"Txn\"");
            assertThat(waiting.tryLock(3, TimeUnit.SECONDS)).isFalse();
            long txns = SERVER.get().counter("grpc_server_started_total{grpc_method=\"Txn\"") - before;
            assertThat(txns)
                    .as("transactions in a 3 s wait: the first try, the last at the deadline, the abandon;"
                            + " none in between")
                    .isLessThanOrEqualTo(3);
            held.unlock();
        }
    }

    /** etcd keeps a deleted key in its index until a compaction, and a read of the lock walks them all. */
    @Test
    void aLockTakenAgainAndAgainReusesOneKey() {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            LockKey key = new LockKey("reuse", "busy");
            java.util.Set<String> keysUsed = new java.util.HashSet<>();
            long lastFence = 0;
            for (int i = 0; i < 5; i++) {
                Acquisition attempt = attempt(key);
                long fence = ((AcquireResult.Granted) engine.tryAcquire(attempt)).fencingToken();
                assertThat(fence).as("fencing tokens still grow").isGreaterThan(lastFence);
                lastFence = fence;
                keysUsed.addAll(keysOf("cerberus/reuse/busy/"));
                assertThat(engine.release(attempt)).isTrue();
            }
            assertThat(keysUsed).as("the keys of 5 holds one after another").hasSize(1);
        }
    }

    @Test
    void twoAttemptsOfOneClientOnOneLockHaveTwoKeysAndTheFirstComesBack() {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            LockKey key = new LockKey("numbers", "two");
            Acquisition first = attempt(key);
            Acquisition second = attempt(key);
            assertThat(engine.tryAcquire(first)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.tryAcquire(second))
                    .as("its own key, queued behind the first")
                    .isInstanceOf(AcquireResult.Busy.class);
            assertThat(keysOf("cerberus/numbers/two/")).hasSize(2).allMatch(k -> k.endsWith("_0") || k.endsWith("_1"));
            assertThat(engine.release(first)).isTrue();
            assertThat(engine.tryAcquire(second)).isInstanceOf(AcquireResult.Granted.class);
            Acquisition third = attempt(key);
            assertThat(engine.tryAcquire(third)).isInstanceOf(AcquireResult.Busy.class);
            assertThat(keysOf("cerberus/numbers/two/"))
                    .as("the third takes the number the first gave back")
                    .hasSize(2)
                    .anyMatch(k -> k.endsWith("_0"))
                    .anyMatch(k -> k.endsWith("_1"));
            engine.abandon(third);
            assertThat(keysOf("cerberus/numbers/two/"))
                    .as("the abandon deletes only the third's key")
                    .hasSize(1)
                    .allMatch(k -> k.endsWith("_1"));
            assertThat(engine.release(second)).isTrue();
            assertThat(keysOf("cerberus/numbers/two/")).isEmpty();
        }
    }

    /** A late resend of an earlier attempt's create, or a release whose delete failed, leaves a key on a number. */
    @Test
    void aKeyLeftByAnEarlierAttemptOnTheSameNumberIsReplacedNotAdopted() {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            LockKey key = new LockKey("leftover", "lock");
            Acquisition first = attempt(key);
            assertThat(engine.tryAcquire(first)).isInstanceOf(AcquireResult.Granted.class);
            String left = keysOf("cerberus/leftover/lock/").get(0);
            String leaseHex = left.substring(left.lastIndexOf('/') + 1, left.lastIndexOf('_'));
            assertThat(engine.release(first)).isTrue();
            SERVER.get()
                    .ctl(
                            "put",
                            "--lease=" + leaseHex,
                            left,
                            "exclusive 0123456789abcdef0123456789abcdef\nan earlier attempt");
            long leftRevision = Long.parseLong(SERVER.get()
                    .ctl("get", left, "-w", "fields")
                    .lines()
                    .filter(line -> line.startsWith("\"CreateRevision\""))
                    .findFirst()
                    .orElseThrow()
                    .replaceAll("\\D", ""));
            Acquisition next = attempt(key);
            AcquireResult result = engine.tryAcquire(next);
            assertThat(result).isInstanceOf(AcquireResult.Granted.class);
            assertThat(((AcquireResult.Granted) result).fencingToken())
                    .as("a new key, not the one left")
                    .isGreaterThan(leftRevision);
            assertThat(SERVER.get().ctl("get", left, "--print-value-only"))
                    .contains(next.token())
                    .doesNotContain("an earlier attempt");
            assertThat(engine.release(next)).isTrue();
            assertThat(keysOf("cerberus/leftover/lock/")).isEmpty();
        }
    }

    /**
     * A release whose delete is sent twice (the first copy unanswered past a quarter of the timeout)
     * must not give its number back: that first copy may still reach etcd after the next hold has
     * created its key, and a plain delete of the same name would end that hold. Here the first copy
     * is held back by an interceptor and its late arrival is played by deleting the name from outside.
     */
    @Test
    void aNumberWhoseDeleteWentOutTwiceIsNotReusedSoALateCopyCannotEndTheNextHold() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean holdBack = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.List<String> heldBack = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.grpc.ClientInterceptor firstCopyHeldBack = new io.grpc.ClientInterceptor() {
            @Override
            public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
                    io.grpc.MethodDescriptor<Q, R> method, io.grpc.CallOptions options, io.grpc.Channel next) {
                if (!method.getFullMethodName().endsWith("/DeleteRange") || !holdBack.compareAndSet(true, false)) {
                    return next.newCall(method, options);
                }
                return new io.grpc.ClientCall<>() {
                    private Listener<R> listener;

                    @Override
                    public void start(Listener<R> responses, io.grpc.Metadata headers) {
                        listener = responses;
                    }

                    @Override
                    public void request(int messages) {}

                    @Override
                    public void cancel(String message, Throwable cause) {
                        listener.onClose(io.grpc.Status.CANCELLED, new io.grpc.Metadata());
                    }

                    @Override
                    public void halfClose() {}

                    @Override
                    public void sendMessage(Q message) {
                        heldBack.add(((io.etcd.jetcd.api.DeleteRangeRequest) message)
                                .getKey()
                                .toStringUtf8());
                    }
                };
            }
        };
        DeleteCopyCounter deleteCopyCounter = new DeleteCopyCounter();
        io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder()
                .endpoints(SERVER.get().endpoint())
                .executorService(new CallerRuns())
                .interceptor(firstCopyHeldBack, deleteCopyCounter)
                .build(); // the last is called first
        EtcdEngine engine = new EtcdEngine(
                "test",
                client,
                deleteCopyCounter,
                EtcdTarget.parse(SERVER.uri()),
                Duration.ofMillis(800),
                (token, reason) -> {});
        try (engine) {
            engine.start();
            LockKey key = new LockKey("late", "copy");
            Acquisition first = attempt(key);
            assertThat(engine.tryAcquire(first)).isInstanceOf(AcquireResult.Granted.class);
            String firstKey = keysOf("cerberus/late/copy/").get(0);
            holdBack.set(true);
            assertThat(engine.release(first)).as("the resend deleted the key").isTrue();
            assertThat(heldBack).as("the first copy was held back").containsExactly(firstKey);
            assertThat(keysOf("cerberus/late/copy/")).isEmpty();

            Acquisition next = attempt(key);
            assertThat(engine.tryAcquire(next)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(keysOf("cerberus/late/copy/"))
                    .as("the next hold's key has another name")
                    .hasSize(1)
                    .doesNotContain(firstKey);
            SERVER.get().ctl("del", firstKey); // the held-back copy arrives
            assertThat(engine.isLocked(key)).as("the next hold keeps its key").isTrue();
            assertThat(engine.renew(next)).isTrue();
            assertThat(engine.release(next)).isTrue();

            Acquisition third = attempt(key);
            assertThat(engine.tryAcquire(third)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(keysOf("cerberus/late/copy/"))
                    .as("a number whose delete went out once is taken again, the retired one is not")
                    .hasSize(1)
                    .allMatch(k -> k.endsWith("_1"));
            assertThat(engine.release(third)).isTrue();
        }
    }

    @Test
    void aReleaseAfterTheKeyWasDeletedFromOutsideSaysTheLockWasNotHeld() {
        try (LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            LockKey key = new LockKey("outside", "deleted");
            Acquisition attempt = attempt(key);
            assertThat(engine.tryAcquire(attempt)).isInstanceOf(AcquireResult.Granted.class);
            SERVER.get().ctl("del", "--prefix", "cerberus/outside/deleted/");
            assertThat(engine.release(attempt)).isFalse();
            Acquisition again = attempt(key);
            assertThat(engine.tryAcquire(again)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(keysOf("cerberus/outside/deleted/"))
                    .as("the number came back: the delete went out once")
                    .hasSize(1)
                    .allMatch(k -> k.endsWith("_0"));
            assertThat(engine.release(again)).isTrue();
        }
    }

    private static java.util.List<String> keysOf(String directory) {
        return SERVER.get()
                .ctl("get", "--prefix", directory, "--keys-only")
                .lines()
                .filter(line -> !line.isBlank())
                .toList();
    }

    @Test
    void theEpochIsOneKeyInTheNamespacesDirectoryOnNoLeaseAndNoLocks() throws Exception {
        String namespace = "epoch-" + token().substring(0, 8);
        try (Cerberus cerberus = Cerberus.builder()
                        .engine(SERVER.uri())
                        .namespace(namespace)
                        .build();
                EtcdEngine engine = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            cerberus.lock("!epoch").lock();
            cerberus.lock("epoch").lock();
            assertThat(engine.raiseEpoch(namespace, 7)).isEqualTo(7);
            String key = "cerberus/" + namespace + "/!epoch";
            assertThat(SERVER.get().ctl("get", key, "--print-value-only").strip())
                    .isEqualTo("7");
            assertThat(SERVER.get().ctl("get", key, "-w", "fields"))
                    .as("on no lease: kept for ever")
                    .contains("\"Lease\" : 0");
            assertThat(keysOf("cerberus/" + namespace + "/"))
                    .as("the epoch and one key per lock")
                    .hasSize(3)
                    .contains(key);
            assertThat(cerberus.inspect("")).extracting(LockInfo::name).containsExactlyInAnyOrder("!epoch", "epoch");
            assertThatThrownBy(() -> engine.raiseEpoch(namespace, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("positive");
        }
    }

    @Test
    void epochRaisesRacingFromTwoClientsEndAtTheHighest() throws Exception {
        String namespace = "epoch-race-" + token().substring(0, 8);
        try (EtcdEngine one = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5));
                EtcdEngine two = (EtcdEngine) Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            java.util.List<Thread> threads = new java.util.ArrayList<>();
            java.util.Queue<String> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
            for (int t = 0; t < 8; t++) {
                EtcdEngine engine = t % 2 == 0 ? one : two;
                int first = t;
                Thread thread = new Thread(() -> {
                    for (long wanted = first + 1; wanted <= 200; wanted += 8) {
                        long epoch = engine.raiseEpoch(namespace, wanted);
                        if (epoch < wanted) {
                            wrong.add("raised to " + wanted + " but got " + epoch);
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join(TestTimes.millis(30_000).toMillis());
            }
            assertThat(wrong).isEmpty();
            assertThat(one.epoch(namespace)).isEqualTo(200);
            assertThat(two.epoch(namespace)).isEqualTo(200);
        }
    }

    @Test
    void anEpochOfAnEtcdThatDoesNotAnswerFailsWithinTheTimeoutNamingTheUri() throws Exception {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", SERVER.get().port());
                EtcdEngine engine =
                        (EtcdEngine) Engines.open("etcd://127.0.0.1:" + proxy.port() + "/cut", Duration.ofSeconds(1))) {
            assertThat(engine.raiseEpoch("cut", 2)).isEqualTo(2);
            proxy.mode(FaultProxy.Mode.BLACKHOLE);
            try {
                long start = System.nanoTime();
                assertThatThrownBy(() -> engine.epoch("cut"))
                        .isInstanceOf(io.cerberus.EngineUnavailableException.class)
                        .hasMessageContaining("127.0.0.1:" + proxy.port())
                        .hasMessageContaining("epoch of namespace 'cut'");
                assertThatThrownBy(() -> engine.raiseEpoch("cut", 3))
                        .isInstanceOf(io.cerberus.EngineUnavailableException.class)
                        .hasMessageContaining("127.0.0.1:" + proxy.port());
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(5_000));
            } finally {
                proxy.mode(FaultProxy.Mode.PASS);
            }
        }
    }

    @Test
    void withoutATtlTheClientLeaseLastsTheDefaultLeaseInWholeSeconds() {
        assertThat(EtcdTarget.parse("etcd://h1:2379", Duration.ofMillis(1500)).ttl())
                .as("rounded up")
                .isEqualTo(Duration.ofSeconds(2));
        assertThat(EtcdTarget.parse("etcd://h1:2379", Duration.ofSeconds(30)).ttl())
                .isEqualTo(Duration.ofSeconds(30));
        assertThat(EtcdTarget.parse("etcd://h1:2379", Duration.ofMillis(200)).ttl())
                .as("at least 1 s")
                .isEqualTo(Duration.ofSeconds(1));
        assertThat(EtcdTarget.parse("etcd://h1:2379", Duration.ofDays(1)).ttl())
                .as("at most an hour")
                .isEqualTo(Duration.ofHours(1));
        assertThat(EtcdTarget.parse("etcd://h1:2379?ttl=7", Duration.ofSeconds(30))
                        .ttl())
                .as("the URI's own wins")
                .isEqualTo(Duration.ofSeconds(7));
    }

    @Test
    void aLeaseLongerThanAskedIsWarnedAbout() {
        // etcd raises TTLs below 1.5 election timeouts (1 s by default): 1 s becomes 2 s
        String uri = SERVER.uri() + "?ttl=1";
        try (CapturedLogs logs = CapturedLogs.of(ClientLease.class.getName(), java.util.logging.Level.ALL);
                Cerberus cerberus = Cerberus.builder()
                        .engine(uri)
                        .namespace("ttl-" + java.util.UUID.randomUUID())
                        .build()) {
            assertThat(cerberus.lock("x").tryLock()).isTrue();
            cerberus.lock("x").unlock();
            assertThat(logs.messages(java.util.logging.Level.WARNING))
                    .singleElement()
                    .asString()
                    .contains("granted a lease of 2 s where 1 s was asked")
                    .contains("keeps its locks for up to 2 s");
        }
    }

    /**
     * A partition answers nothing until the request timeout (30 s here), so a keep-alive that
     * hangs says nothing either: the lease must be given up a TTL after its last confirmed
     * keep-alive was sent, or the holds on it outlive it on the server.
     */
    @Test
    void aLeaseUnansweredForItsTtlIsLostWhileItsKeepAliveStillHangs() throws Exception {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", SERVER.get().port());
                Cerberus cerberus = Cerberus.builder()
                        .engine("etcd://127.0.0.1:" + proxy.port() + "/hang?ttl=1")
                        .connectTimeout(Duration.ofSeconds(30))
                        .defaultLease(Duration.ofSeconds(30))
                        .build()) {
            DistributedLock lock = cerberus.lock("cut");
            lock.lock();
            CountDownLatch lost = new CountDownLatch(1);
            lock.lease().onLost((lease, reason) -> lost.countDown());
            proxy.mode(FaultProxy.Mode.BLACKHOLE);
            try {
                assertThat(lost.await(TestTimes.millis(5_000).toMillis(), TimeUnit.MILLISECONDS))
                        .as(
                                "lost about 1 s after the cut, not at the keep-alive's 30 s timeout nor the hold's 30 s lease")
                        .isTrue();
                assertThat(lock.lease().isValid()).isFalse();
            } finally {
                proxy.mode(FaultProxy.Mode.PASS);
            }
        }
    }

    /**
     * An acquire answered after its lease was declared lost: a slow link (1.2 s each way) lets the
     * acquire reach the server while the lease lives, so the key is created on it, but the answer
     * comes after the lease's deadline, when the client has let the lease go; the server then ends
     * it, and the key with it. The grant must not become a hold: the acquire goes on with a new lease.
     */
    @Test
    void aGrantAnsweredAfterItsLeaseWasDeclaredLostIsNotAHold() throws Exception {
        java.util.regex.Pattern lostLine = java.util.regex.Pattern.compile("etcd lease ([0-9a-f]+) lost");
        try (CapturedLogs logs = CapturedLogs.of(ClientLease.class.getName(), java.util.logging.Level.ALL);
                FaultProxy proxy = FaultProxy.start("127.0.0.1", SERVER.get().port());
                Cerberus cerberus = Cerberus.builder()
                        .engine("etcd://127.0.0.1:" + proxy.port() + "/late?ttl=1")
                        .connectTimeout(Duration.ofSeconds(30))
                        .defaultLease(Duration.ofSeconds(30))
                        .build();
                Cerberus other =
                        Cerberus.builder().engine(SERVER.uri() + "/late").build()) {
            proxy.delay(1_200);
            java.util.concurrent.CompletableFuture<io.cerberus.Lease> taken =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        DistributedLock lock = cerberus.lock("late");
                        try {
                            return lock.tryLock(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS)
                                    ? lock.lease()
                                    : null;
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    });
            String lostLease;
            try {
                io.cerberus.testkit.Poll.until(
                        "the client lease to be declared lost",
                        TestTimes.millis(5_000),
                        () -> logs.lines().stream()
                                .anyMatch(line -> lostLine.matcher(line).find()));
                lostLease = logs.lines().stream()
                        .map(lostLine::matcher)
                        .filter(java.util.regex.Matcher::find)
                        .findFirst()
                        .orElseThrow()
                        .group(1);
            } finally {
                proxy.mode(FaultProxy.Mode.PASS); // the answer to the acquire, held up on the way back, comes at once
            }
            io.cerberus.Lease held = taken.get(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(held).as("granted on a new lease").isNotNull();
            io.cerberus.testkit.Poll.until(
                    "the server to end the lease the client let go",
                    TestTimes.millis(10_000),
                    () -> SERVER.get().ctl("lease", "timetolive", lostLease).contains("expired"));
            assertThat(held.isValid()).isTrue();
            assertThat(other.lock("late").tryLock())
                    .as("the hold is not on the lease the server ended")
                    .isFalse();
        }
    }

    @Test
    void badUrisAreRejectedWithTheRule() {
        assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1:2379?ttl=0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl")
                .hasMessageContaining("whole number from 1 to 3600");
        assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1:2379?ttl=1.5"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl")
                .hasMessageContaining("whole number from 1 to 3600");
        assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1:2379?tll=3"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'tll' in etcd URI");
        EtcdTarget target = EtcdTarget.parse("etcd://app:s%40cret@h1:2379,h2/locks?ttl=7");
        assertThat(target.endpoints()).containsExactly("http://h1:2379", "http://h2:2379");
        assertThat(target.user()).contains("app");
        assertThat(target.password()).contains("s@cret");
        assertThat(target.prefix()).isEqualTo("locks");
        assertThat(target.ttl()).isEqualTo(Duration.ofSeconds(7));
        assertThat(EtcdTarget.parse("etcds://h1").endpoints()).containsExactly("https://h1:2379");
        for (String loose : new String[] {"1", "yes", "on", "TRUE"}) {
            assertThatThrownBy(() -> EtcdTarget.parse("etcd://h1:2379?tls=" + loose))
                    .as("tls=" + loose + " is not plaintext")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be true or false");
        }
        assertThat(EtcdTarget.parse("etcd://h1:2379?tls=true").endpoints()).containsExactly("https://h1:2379");
        assertThat(EtcdTarget.parse("etcd://h1:2379?tls=false").endpoints()).containsExactly("http://h1:2379");
    }
}
