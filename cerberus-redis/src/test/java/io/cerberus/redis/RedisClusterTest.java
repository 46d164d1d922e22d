package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.UnsafeEngineException;
import io.cerberus.servers.RedisCluster;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import io.cerberus.spi.LockKey;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the engine does on a real Redis Cluster beyond the conformance suite. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisClusterTest {
    @RegisterExtension
    static final ServerExtension<RedisCluster> CLUSTER = sharedCluster();

    private final String namespace = "cluster-" + UUID.randomUUID().toString().substring(0, 8);

    /** @return the cluster the test classes share, started once per run: three masters and a replica of each */
    static ServerExtension<RedisCluster> sharedCluster() {
        return ServerExtension.shared(
                "redis-cluster",
                () -> RedisCluster.builder().masters(3).replicasPerMaster(1).start());
    }

    private Cerberus client(String uri, Duration lease) {
        return Cerberus.builder()
                .engine(uri)
                .namespace(namespace)
                .defaultLease(lease)
                .build();
    }

    /** Masters (by port) that own at least one of the names' slots. */
    private static Set<Integer> mastersOf(String namespace, List<String> names) {
        Set<Integer> masters = new HashSet<>();
        for (String name : names) {
            masters.add(CLUSTER.get()
                    .masterOf(slotOf(namespace, name))
                    .orElseThrow()
                    .port());
        }
        return masters;
    }

    private static int slotOf(String namespace, String name) {
        return SlotHash.getSlot(LockKeys.of(new LockKey(namespace, name)).owner());
    }

    private static boolean isLockedQuietly(DistributedLock lock) {
        try {
            return lock.isLocked();
        } catch (EngineUnavailableException e) {
            return false;
        }
    }

    private static boolean tryLockQuietly(DistributedLock lock) {
        try {
            return lock.tryLock();
        } catch (EngineUnavailableException e) {
            return false;
        }
    }

    @Test
    void aReplicatedLockSurvivesTheFailoverOfItsMaster() throws Exception {
        try (RedisCluster cluster = RedisCluster.builder().start();
                Cerberus holder = Cerberus.builder()
                        .engine(cluster.uri() + "?waitReplicas=1&waitTimeout=2s")
                        .namespace(namespace)
                        .defaultLease(Duration.ofSeconds(15))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build();
                Cerberus other = Cerberus.builder()
                        .engine(cluster.uri())
                        .namespace(namespace)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build()) {
            DistributedLock lock = holder.lock("order-7");
            assertThat(lock.tryLock()).isTrue();
            long fence = lock.lease().fencingToken();
            AtomicReference<Object> lost = new AtomicReference<>();
            lock.lease().onLost((lease, reason) -> lost.set(reason));
            RedisServer master = cluster.masterOf(slotOf(namespace, "order-7")).orElseThrow();
            master.kill();
            Poll.until(
                    "a replica to take over the slot of the lock",
                    TestTimes.millis(60_000),
                    () -> cluster.masterOf(slotOf(namespace, "order-7"))
                            .filter(now -> now != master)
                            .isPresent());
            DistributedLock contender = other.lock("order-7");
            Poll.until(
                    "the other client to see the hold on the new master",
                    TestTimes.millis(30_000),
                    () -> isLockedQuietly(contender));
            assertThat(contender.tryLock()).as("the hold survived the failover").isFalse();
            Poll.until(
                    "the holder to reach the new master",
                    TestTimes.millis(30_000),
                    () -> isLockedQuietly(holder.lock("order-7")));
            assertThat(lost.get()).as("lease lost across the failover").isNull();
            lock.unlock();
            Poll.until(
                    "the contender to get the lock once released",
                    TestTimes.millis(10_000),
                    () -> tryLockQuietly(contender));
            assertThat(contender.lease().fencingToken()).isGreaterThan(fence);
            contender.unlock();
        }
    }

    @Test
    void holdsOnEveryMasterAreRenewedTogetherAndStayValid() throws Exception {
        Duration lease = Duration.ofMillis(900);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            names.add("held-" + i);
        }
        assertThat(mastersOf(namespace, names))
                .as("the names spread over every master")
                .hasSize(3);
        try (Cerberus cerberus = client(CLUSTER.uri(), lease)) {
            List<DistributedLock> held = new ArrayList<>();
            for (String name : names) {
                DistributedLock lock = cerberus.lock(name);
                lock.lock();
                held.add(lock);
            }
            // three lease periods: without renewals grouped by slot every renewal would fail (CROSSSLOT)
            Thread.sleep(lease.multipliedBy(3).toMillis());
            for (DistributedLock lock : held) {
                assertThat(lock.lease().isValid())
                        .as("lease of %s after 3 lease periods", lock.name())
                        .isTrue();
            }
            held.forEach(DistributedLock::unlock);
        }
    }

    @Test
    void inspectListsTheLocksOfEveryMaster() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            names.add("seen-" + i);
        }
        assertThat(mastersOf(namespace, names)).hasSize(3);
        try (Cerberus cerberus = client(CLUSTER.uri(), Duration.ofSeconds(30))) {
            for (String name : names) {
                assertThat(cerberus.lock(name).tryLock()).isTrue();
            }
            assertThat(cerberus.inspect("").stream().map(LockInfo::name)).containsExactlyInAnyOrderElementsOf(names);
            names.forEach(name -> cerberus.lock(name).unlock());
        }
    }

    @Test
    void aGrantWaitsForItsReplica() {
        try (Cerberus cerberus = client(CLUSTER.uri() + "?waitReplicas=1&waitTimeout=2s", Duration.ofSeconds(30))) {
            List<String> names =
                    List.of("replicated-a", "replicated-b", "replicated-c", "replicated-d", "replicated-e");
            for (String name : names) {
                DistributedLock lock = cerberus.lock(name);
                assertThat(lock.tryLock()).isTrue();
                lock.unlock();
            }
        }
    }

    @Test
    void aMasterThatMayEvictIsRefusedAtConnectAndFailsTheHealthCheckOfAnOpenEngine() {
        RedisServer master = CLUSTER.get().masterOf(slotOf(namespace, "any")).orElseThrow();
        try (Cerberus opened = client(CLUSTER.uri(), Duration.ofSeconds(30))) {
            assertThat(opened.checkEngine(opened.engines().get(0)))
                    .as("three masters under noeviction")
                    .isEmpty();
            RespQuery.send(master.port(), "CONFIG", "SET", "maxmemory-policy", "allkeys-lru", "maxmemory", "1gb");
            assertThatThrownBy(() -> opened.checkEngine(opened.engines().get(0)))
                    .isInstanceOf(UnsafeEngineException.class)
                    .hasMessageContaining("master " + master.hostPort() + " runs maxmemory-policy allkeys-lru");
            assertThatThrownBy(() -> client(CLUSTER.uri(), Duration.ofSeconds(30)))
                    .isInstanceOf(UnsafeEngineException.class)
                    .hasMessageContaining("master " + master.hostPort() + " runs maxmemory-policy allkeys-lru")
                    .hasMessageContaining("acceptEviction=true");
            try (Cerberus accepting = client(CLUSTER.uri() + "?acceptEviction=true", Duration.ofSeconds(30))) {
                assertThat(accepting.checkEngine(accepting.engines().get(0)))
                        .singleElement()
                        .asString()
                        .contains("master " + master.hostPort())
                        .contains("accepted");
            }
        } finally {
            RespQuery.send(master.port(), "CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "0");
        }
    }

    @Test
    void aClusterHasOnlyDatabaseZero() {
        String uri = CLUSTER.uri();
        assertThatThrownBy(() -> Cerberus.builder().engine(uri + "/3").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only database 0");
    }
}
