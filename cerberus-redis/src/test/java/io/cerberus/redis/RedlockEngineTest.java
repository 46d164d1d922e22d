package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Capability;
import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.servers.RedisGroup;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Redlock cases beyond the conformance suite: nodes killed and restarted empty, no fencing token, bad URIs. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockEngineTest {
    /** Five masters; a test that kills or pauses some leaves them to be healed after it. */
    @RegisterExtension
    static final ServerExtension<RedisGroup> SERVERS =
            ServerExtension.perClass(() -> RedisGroup.start(5)).healAfterEach();

    private final List<Cerberus> clients = new ArrayList<>();
    private List<RedisServer> servers;
    private String namespace;

    @BeforeEach
    void newNamespace() {
        servers = SERVERS.get().nodes();
        namespace = "redlock-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void closeClients() {
        clients.forEach(Cerberus::close);
    }

    private Cerberus client() {
        return client(Duration.ofSeconds(30));
    }

    private Cerberus client(Duration defaultLease) {
        Cerberus cerberus = Cerberus.builder()
                .engine(SERVERS.uri())
                .namespace(namespace)
                .defaultLease(defaultLease)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(cerberus);
        return cerberus;
    }

    private static String address(RedisServer server) {
        return server.hostPort();
    }

    private static boolean exists(RedisServer server, String key) {
        return RespQuery.send(server.port(), "EXISTS", key).equals(List.of("1"));
    }

    private static boolean deleted(RedisServer server, String key) {
        return RespQuery.send(server.port(), "DEL", key).equals(List.of("1"));
    }

    private String ownerKey(String name) {
        return LockKeys.of(new LockKey(namespace, name)).owner();
    }

    /** An acquire returns once a majority granted; the others' grants may still be on their way. */
    private void awaitOnEveryNode(String name) {
        for (RedisServer server : servers) {
            Poll.until(
                    "lock '" + name + "' to be on " + address(server),
                    TestTimes.millis(2000),
                    () -> exists(server, ownerKey(name)));
        }
    }

    @Test
    void redlockKeepsNoIdempotencyRecordsAndSaysSo() {
        assertThatThrownBy(() -> client().idempotency(io.cerberus.idempotency.IdempotencyOptions.defaults()))
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("keeps no idempotency records")
                .hasMessageContaining("redis://");
    }

    @Test
    void locksWorkWithAMinorityOfNodesDown() throws Exception {
        Cerberus before = client();
        servers.get(0).kill();
        servers.get(1).kill();
        Cerberus after = client();
        for (Cerberus holder : List.of(before, after)) {
            DistributedLock mine = holder.lock("minority-down");
            DistributedLock theirs = (holder == before ? after : before).lock("minority-down");
            assertThat(mine.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .as("locked with 3 of 5 nodes")
                    .isTrue();
            assertThat(theirs.tryLock())
                    .as("mutual exclusion holds on the 3 nodes left")
                    .isFalse();
            mine.unlock();
            assertThat(theirs.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            theirs.unlock();
        }
    }

    @Test
    void aMajorityDownFailsWithinTheWaitNamingTheNodesDown() throws Exception {
        Cerberus cerberus = client();
        DistributedLock lock = cerberus.lock("majority-down");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        List<RedisServer> killed = servers.subList(2, 5);
        killed.forEach(RedisServer::kill);
        Duration wait = Duration.ofSeconds(2);
        long start = System.nanoTime();
        assertThatThrownBy(() -> lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("2 of 5 nodes answered")
                .hasMessageContaining("majority needs 3")
                .hasMessageContaining(address(killed.get(0)))
                .hasMessageContaining(address(killed.get(1)))
                .hasMessageContaining(address(killed.get(2)))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("nodes down: " + address(servers.get(0))));
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("failed within the wait")
                .isLessThan(wait.plus(TestTimes.millis(1000)));
        assertThat(lock.isHeldByCurrentThread()).isFalse();

        long opening = System.nanoTime();
        assertThatThrownBy(this::client)
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining(SERVERS.uri())
                .hasMessageContaining("a majority needs 3")
                .hasMessageContaining("nodes down: " + address(killed.get(0)) + " (")
                .hasMessageContaining(address(killed.get(1)) + " (")
                .hasMessageContaining(address(killed.get(2)) + " (");
        assertThat(Duration.ofNanos(System.nanoTime() - opening))
                .isLessThan(Duration.ofSeconds(2).plus(TestTimes.millis(2000)));

        killed.forEach(RedisServer::restart);
        Poll.until("locks to work again once the nodes are back", TestTimes.millis(10_000), () -> {
            try {
                boolean locked = lock.tryLock();
                if (locked) {
                    lock.unlock();
                }
                return locked;
            } catch (EngineUnavailableException e) {
                return false;
            }
        });
    }

    @Test
    void nodesThatStopAnsweringAreSlowFirstAndDownAfterTheTimeout() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        Cerberus client = Cerberus.builder()
                .engine(SERVERS.uri() + "?timeout=1s")
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(client);
        DistributedLock lock = client.lock("paused");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        List<RedisServer> paused = servers.subList(0, 3);
        paused.forEach(RedisServer::pause);
        assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS))
                .as("nodes that answered a moment ago are slow, not down")
                .isFalse();
        long start = System.nanoTime();
        // tries without a wait, so each answer is the engine's own (a wait would try the nodes again until it ends)
        long deadline = start + timeout.plus(TestTimes.millis(2000)).toNanos();
        EngineUnavailableException down = null;
        while (down == null && System.nanoTime() - deadline < 0) {
            try {
                assertThat(lock.tryLock()).as("no majority: not granted").isFalse();
            } catch (EngineUnavailableException e) {
                down = e;
            }
        }
        assertThat(down).as("down once silent for the timeout").isNotNull();
        assertThat(down).hasMessageContaining(address(paused.get(0))).hasMessageContaining(address(paused.get(2)));
        paused.forEach(RedisServer::resume);
        assertThat(lock.tryLock(TestTimes.millis(3000).toMillis(), TimeUnit.MILLISECONDS))
                .as("back once they answer")
                .isTrue();
        lock.unlock();
    }

    @Test
    void aMajorityGrantedAfterTheValidityIsReleasedNotHeld() throws Exception {
        // a long node timeout, so paused nodes that resume after the validity of a 150ms lease still grant
        Cerberus cerberus = Cerberus.builder()
                .engine(SERVERS.uri() + "?nodeTimeout=10s")
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(cerberus);
        DistributedLock lock = cerberus.lock("too-late");
        assertThat(lock.tryLock(0, 150, TimeUnit.MILLISECONDS))
                .as("held while every node answers at once")
                .isTrue();
        lock.unlock();
        List<RedisServer> late = servers.subList(0, 3);
        late.forEach(RedisServer::pause);
        AtomicReference<Object> outcome = new AtomicReference<>();
        long sent = System.nanoTime();
        Thread acquirer = new Thread(
                () -> {
                    try {
                        outcome.set(lock.tryLock(0, 150, TimeUnit.MILLISECONDS));
                    } catch (Throwable t) {
                        outcome.set(t);
                    }
                },
                "late-acquirer");
        acquirer.setDaemon(true);
        acquirer.start();
        Poll.untilWaiting(acquirer, TestTimes.millis(5000));
        Poll.until(
                "the validity of the 150ms lease to pass",
                TestTimes.millis(5000),
                () -> System.nanoTime() - sent > TimeUnit.MILLISECONDS.toNanos(200));
        late.forEach(RedisServer::resume);
        acquirer.join(TestTimes.millis(10_000).toMillis());
        assertThat(outcome.get())
                .as("granted by a majority, but after the validity")
                .isEqualTo(Boolean.FALSE);
        for (RedisServer server : servers) {
            Poll.until(
                    "the late grant to be released on " + address(server),
                    TestTimes.millis(2000),
                    () -> !exists(server, ownerKey("too-late")));
        }
        assertThat(lock.tryLock(0, 150, TimeUnit.MILLISECONDS))
                .as("held again once the nodes answer at once")
                .isTrue();
        lock.unlock();
    }

    @Test
    void nodesRestartedEmptyDoNotLetASecondClientIn() throws Exception {
        Duration lease = Duration.ofMillis(900);
        DistributedLock mine = client(lease).lock("restarted");
        DistributedLock theirs = client().lock("restarted");
        mine.lock();
        for (RedisServer server : servers.subList(0, 2)) {
            server.kill();
            server.restart();
            assertThat(exists(server, ownerKey("restarted")))
                    .as("restarted empty")
                    .isFalse();
        }
        long end = System.nanoTime() + lease.multipliedBy(3).toNanos();
        int probes = 0;
        while (System.nanoTime() < end) {
            assertThat(theirs.tryLock(lease.toMillis() / 4, TimeUnit.MILLISECONDS))
                    .as("taken with 2 of 5 nodes empty")
                    .isFalse();
            probes++;
        }
        assertThat(probes).isGreaterThan(3);
        assertThat(mine.lease().isValid())
                .as("renewed on the 3 nodes that kept it")
                .isTrue();
        mine.unlock();
        assertThat(theirs.tryLock(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        theirs.unlock();
    }

    @Test
    void renewalRefusedByAMajorityLosesTheLease() throws Exception {
        DistributedLock lock = client(Duration.ofMillis(600)).lock("deleted");
        lock.lock();
        CountDownLatch told = new CountDownLatch(1);
        lock.lease().onLost((lease, reason) -> told.countDown());
        awaitOnEveryNode("deleted");
        for (RedisServer server : servers.subList(0, 3)) {
            assertThat(deleted(server, ownerKey("deleted"))).isTrue();
        }
        assertThat(told.await(TestTimes.millis(2000).toMillis(), TimeUnit.MILLISECONDS))
                .as("loss listener called")
                .isTrue();
        assertThat(lock.lease().isValid()).isFalse();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("'deleted'")
                .hasMessageContaining("refused to renew");
    }

    @Test
    void renewalThatCannotReachAMajorityLosesTheLeaseWhenItRunsOut() throws Exception {
        Duration lease = Duration.ofMillis(600);
        DistributedLock lock = client(lease).lock("unreachable");
        lock.lock();
        CountDownLatch told = new CountDownLatch(1);
        lock.lease().onLost((l, reason) -> told.countDown());
        servers.subList(0, 3).forEach(RedisServer::kill);
        Poll.until(
                "the lease to be uncertain",
                TestTimes.millis(2000),
                () -> !lock.lease().isValid());
        assertThat(told.await(lease.multipliedBy(2).plus(TestTimes.millis(1000)).toMillis(), TimeUnit.MILLISECONDS))
                .as("loss listener called once the lease ran out")
                .isTrue();
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("'unreachable'")
                .hasMessageContaining("could not be reached");
    }

    @Test
    void fencingTokenFailsSayingRedlockHasNone() throws Exception {
        Cerberus cerberus = client();
        assertThat(cerberus.capabilities()).containsExactlyInAnyOrder(Capability.MULTI_PROCESS, Capability.INSPECT);
        try (Lease lease = cerberus.lock("unfenced").acquire(Duration.ZERO)) {
            assertThatThrownBy(lease::fencingToken)
                    .isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("Redlock has no fencing token")
                    .hasMessageContaining("independent masters")
                    .hasMessageContaining("engines with fencing tokens")
                    .hasMessageContaining("redis:");
        }
        assertThatThrownBy(() -> cerberus.readWriteLock("rw"))
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("read-write locks");
    }

    @Test
    void aNodeThatMayEvictIsRefusedAtConnectUnlessAccepted() {
        RedisServer evicting = servers.get(2);
        RespQuery.send(evicting.port(), "CONFIG", "SET", "maxmemory-policy", "volatile-lru", "maxmemory", "1gb");
        try {
            assertThatThrownBy(this::client)
                    .isInstanceOf(UnsafeEngineException.class)
                    .hasMessageContaining("redlock engine")
                    .hasMessageContaining("node " + address(evicting) + " runs maxmemory-policy volatile-lru")
                    .hasMessageContaining("acceptEviction=true");
            Cerberus accepting = Cerberus.builder()
                    .engine(SERVERS.uri() + "?acceptEviction=true")
                    .namespace(namespace)
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            clients.add(accepting);
            assertThat(accepting.checkEngine(accepting.engines().get(0)))
                    .singleElement()
                    .asString()
                    .contains("node " + address(evicting))
                    .contains("accepted");
        } finally {
            RespQuery.send(evicting.port(), "CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "0");
        }
    }

    @Test
    void aNodeSwitchedToEvictAfterOpenFailsTheHealthCheck() {
        Cerberus cerberus = client();
        assertThat(cerberus.checkEngine(cerberus.engines().get(0))).isEmpty();
        RedisServer evicting = servers.get(4);
        RespQuery.send(evicting.port(), "CONFIG", "SET", "maxmemory-policy", "allkeys-random", "maxmemory", "1gb");
        try {
            assertThatThrownBy(() -> cerberus.checkEngine(cerberus.engines().get(0)))
                    .isInstanceOf(UnsafeEngineException.class)
                    .hasMessageContaining("no longer safe")
                    .hasMessageContaining("node " + address(evicting));
        } finally {
            RespQuery.send(evicting.port(), "CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "0");
        }
        servers.get(0).kill();
        assertThat(cerberus.checkEngine(cerberus.engines().get(0)))
                .as("a node down: its policy is unread, a warning")
                .singleElement()
                .asString()
                .contains("node " + address(servers.get(0)))
                .contains("could not read");
    }

    @Test
    void inspectListsHoldsThatAMajorityHas() throws Exception {
        Cerberus cerberus = client();
        try (Lease lease = cerberus.lock("listed").acquire(Duration.ZERO)) {
            awaitOnEveryNode("listed");
            for (RedisServer server : servers.subList(0, 2)) {
                assertThat(deleted(server, ownerKey("listed"))).isTrue();
            }
            List<io.cerberus.LockInfo> infos = cerberus.inspect("");
            assertThat(infos).hasSize(1);
            assertThat(infos.get(0).name()).isEqualTo("listed");
            assertThat(infos.get(0).fencingToken()).isEqualTo(-1);
            assertThat(infos.get(0).holder())
                    .contains(Long.toString(ProcessHandle.current().pid()));
            assertThat(infos.get(0).leaseRemaining())
                    .hasValueSatisfying(left -> assertThat(left).isPositive());
            assertThat(deleted(servers.get(2), ownerKey("listed"))).isTrue();
            assertThat(cerberus.inspect("")).as("held on 2 of 5 nodes only").isEmpty();
            assertThatThrownBy(lease::close).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void waitersShareOneSubscriptionPerLockAndLeaveNone() throws Exception {
        try (RedlockEngine engine = (RedlockEngine) new RedlockEngineProvider()
                .open(new io.cerberus.spi.EngineContext(SERVERS.uri(), Duration.ofSeconds(2), (token, reason) -> {}))) {
            LockKey key = new LockKey(namespace, "subscribed");
            Acquisition holder =
                    new Acquisition(key, LockMode.EXCLUSIVE, "a".repeat(32), "holder", Duration.ofSeconds(30));
            Acquisition first =
                    new Acquisition(key, LockMode.EXCLUSIVE, "b".repeat(32), "first", Duration.ofSeconds(30));
            Acquisition second =
                    new Acquisition(key, LockMode.EXCLUSIVE, "c".repeat(32), "second", Duration.ofSeconds(30));
            assertThat(engine.tryAcquire(holder)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(engine.tryAcquire(first)).isInstanceOf(AcquireResult.Busy.class);
            assertThat(engine.tryAcquire(second)).isInstanceOf(AcquireResult.Busy.class);
            assertThat(engine.waiters().subscriptions())
                    .as("one channel for both waiters")
                    .isEqualTo(1);
            engine.abandon(first);
            assertThat(engine.waiters().subscriptions()).isEqualTo(1);
            engine.abandon(second);
            assertThat(engine.waiters().subscriptions())
                    .as("unsubscribed when the last waiter left")
                    .isZero();
            assertThat(engine.release(holder)).isTrue();
        }
    }

    @Test
    void validityIsTheLeaseLessTheDrift() {
        try (RedlockEngine engine = (RedlockEngine) new RedlockEngineProvider()
                .open(new io.cerberus.spi.EngineContext(
                        SERVERS.uri() + "?drift=0.02&nodeTimeout=30ms",
                        Duration.ofSeconds(2),
                        (token, reason) -> {}))) {
            assertThat(engine.validity(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(10_000 - 200 - 2));
            assertThat(engine.nodeTimeout(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(30));
            assertThat(engine.quorum()).isEqualTo(3);
        }
        try (RedlockEngine engine = (RedlockEngine) new RedlockEngineProvider()
                .open(new io.cerberus.spi.EngineContext(SERVERS.uri(), Duration.ofSeconds(2), (token, reason) -> {}))) {
            assertThat(engine.validity(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(30_000 - 300 - 2));
            assertThat(engine.nodeTimeout(Duration.ofSeconds(30)))
                    .as("default, capped")
                    .isEqualTo(Duration.ofMillis(100));
            assertThat(engine.nodeTimeout(Duration.ofMillis(600)))
                    .as("default, a tenth of the lease")
                    .isEqualTo(Duration.ofMillis(60));
        }
    }

    @Test
    void credentialsFromTheOptionsReachEveryNode() {
        List<RedisWithAdmin> secured = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                secured.add(RedisWithAdmin.start("--requirepass", "s3cret"));
            }
            String uri = "redlock://"
                    + secured.stream()
                            .map(server -> "127.0.0.1:" + server.port())
                            .collect(Collectors.joining(","));
            RedisOptions right =
                    RedisOptions.builder().password("s3cret".toCharArray()).build();
            try (Cerberus cerberus = Cerberus.builder()
                    .engine(uri, right)
                    .connectTimeout(Duration.ofSeconds(2))
                    .build()) {
                assertThat(cerberus.lock("auth").tryLock()).isTrue();
                for (RedisWithAdmin server : secured) {
                    Poll.until(
                            "the hold to reach 127.0.0.1:" + server.port(),
                            TestTimes.millis(2000),
                            () -> server.admin("s3cret")
                                            .exists(LockKeys.of(new LockKey("default", "auth"))
                                                    .owner())
                                    == 1);
                }
                cerberus.lock("auth").unlock();
            }
            RedisOptions wrong =
                    RedisOptions.builder().password("nope".toCharArray()).build();
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(uri, wrong)
                            .connectTimeout(Duration.ofSeconds(2))
                            .build())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("refused the user or password")
                    .hasMessageNotContaining("nope");
        } finally {
            secured.forEach(RedisWithAdmin::close);
        }
        RedisOptions replicas = RedisOptions.builder()
                .waitForReplicas(1, Duration.ofMillis(100))
                .build();
        assertThatThrownBy(
                        () -> Cerberus.builder().engine(SERVERS.uri(), replicas).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitForReplicas");
    }

    @Test
    void badUrisAreRejectedNamingTheRule() {
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://u:secret@h1:1,h2:2", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 3 nodes")
                .hasMessageContaining("has 2");
        assertThatThrownBy(() -> Cerberus.connect("redlock://u:secret@127.0.0.1:1,127.0.0.1:2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 3 nodes")
                .satisfies(
                        e -> assertThat(e.getMessage()).doesNotContain("secret").contains("****"));
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:2,h3:3?lease=5s", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'lease'")
                .hasMessageContaining("known parameters: acceptEviction, drift, nodeTimeout, timeout");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:2,h3:3?acceptEviction=1", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("acceptEviction")
                .hasMessageContaining("true or false");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:2,h3:3?nodeTimeout=50", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nodeTimeout")
                .hasMessageContaining("such as 250ms, 2s or 1m");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:2,h3:3?timeout=0s", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("positive duration");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:2,h3:3?drift=0.7", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("drift")
                .hasMessageContaining("below 0.5");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h1:1,h3:3", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("listed twice");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,,h3:3", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has an empty host");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:70000,h3:3", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 to 65535");
        assertThatThrownBy(() -> RedlockEngineProvider.parse("redlock://h1:1,h2:2,h3:3/1", "shown"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no path");

        RedlockEngineProvider.Settings even =
                RedlockEngineProvider.parse("redlock://:p%2Bw@h1,h2:2,[::1]:3,h4:4?timeout=2s", "shown");
        assertThat(even.addresses()).containsExactly("h1:6379", "h2:2", "[::1]:3", "h4:4");
        assertThat(even.nodes().get(2).getHost()).isEqualTo("::1");
        assertThat(new String(even.nodes()
                        .get(0)
                        .getCredentialsProvider()
                        .resolveCredentials()
                        .block()
                        .getPassword()))
                .isEqualTo("p+w");
        assertThat(even.timeout()).contains(Duration.ofSeconds(2));
        assertThat(even.nodeTimeout()).isEmpty();
    }
}
