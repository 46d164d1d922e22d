package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.RedisSentinel;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Failover through real Sentinels, and {@code WAIT} for replicas; each test fails over a deployment of its own. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisSentinelTest {

    private static boolean tryLockQuietly(DistributedLock lock) {
        try {
            return lock.tryLock();
        } catch (EngineUnavailableException e) {
            return false;
        }
    }

    @Test
    void aReplicatedLockSurvivesAFailoverAndItsHolderKeepsIt() throws Exception {
        try (RedisSentinel servers = RedisSentinel.start();
                Cerberus holder = Cerberus.builder()
                        .engine(servers.uri() + "?waitReplicas=1&waitTimeout=2s")
                        .defaultLease(Duration.ofSeconds(15))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build()) {
            DistributedLock lock = holder.lock("order-1");
            assertThat(lock.tryLock()).isTrue();
            long fence = lock.lease().fencingToken();
            AtomicReference<Object> lostReason = new AtomicReference<>();
            lock.lease().onLost((lease, reason) -> lostReason.set(reason));

            RedisServer master = servers.primary();
            master.kill();
            assertThat(servers.awaitNewPrimary(master))
                    .as("the promoted node")
                    .isSameAs(servers.nodes().get(1));

            try (Cerberus other = Cerberus.builder()
                    .engine(servers.uri())
                    .connectTimeout(Duration.ofSeconds(2))
                    .build()) {
                DistributedLock contender = other.lock("order-1");
                // the new master got the hold before the grant returned (WAIT): nobody else can take it
                Poll.until("the contender to reach the new master", TestTimes.millis(20_000), () -> {
                    try {
                        return !contender.tryLock() && contender.isLocked();
                    } catch (EngineUnavailableException e) {
                        return false;
                    }
                });
                // (a probe that only reads: the holder's grants would now fail, since the new master has no replica)
                Poll.until("the holder's connection to reach the new master", TestTimes.millis(20_000), () -> {
                    try {
                        return !holder.lock("probe").isLocked();
                    } catch (EngineUnavailableException e) {
                        return false;
                    }
                });
                assertThat(lock.lease().isValid())
                        .as("the holder's lease after the failover")
                        .isTrue();
                assertThat(lostReason.get())
                        .as("lease lost across the failover")
                        .isNull();
                lock.unlock();
                Poll.until(
                        "the contender to get the lock once released",
                        TestTimes.millis(10_000),
                        () -> tryLockQuietly(contender));
                assertThat(contender.lease().fencingToken())
                        .as("fencing token after the failover")
                        .isGreaterThan(fence);
                contender.unlock();
            }
        }
    }

    @Test
    void aGrantNoReplicaAcknowledgesIsReleasedAndRefused() throws Exception {
        try (RedisSentinel servers = RedisSentinel.start();
                Cerberus cerberus = Cerberus.builder()
                        .engine(servers.primary().uri() + "?waitReplicas=1&waitTimeout=300ms")
                        .build()) {
            DistributedLock lock = cerberus.lock("needs-a-replica");
            assertThat(lock.tryLock()).as("granted while the replica answers").isTrue();
            lock.unlock();

            servers.nodes().get(1).kill();
            Poll.until(
                    "the master to see its replica gone",
                    TestTimes.millis(20_000),
                    () -> RespQuery.text(servers.primary().port(), "INFO", "replication")
                            .contains("connected_slaves:0"));
            assertThatThrownBy(lock::tryLock)
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("only 0 of the 1 replica")
                    .hasMessageContaining("released again");
            assertThat(lock.isLocked())
                    .as("the unacknowledged grant was released")
                    .isFalse();
        }
    }

    @Test
    void waitersFollowTheMasterAcrossAFailover() throws Exception {
        try (RedisSentinel servers = RedisSentinel.start();
                Cerberus cerberus = Cerberus.builder()
                        .engine(servers.uri())
                        .defaultLease(Duration.ofSeconds(2))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build()) {
            RedisServer master = servers.primary();
            master.kill();
            assertThat(servers.awaitNewPrimary(master))
                    .as("the promoted node")
                    .isSameAs(servers.nodes().get(1));
            DistributedLock lock = cerberus.lock("after-failover");
            Poll.until(
                    "the client to serve locks on the new master",
                    TestTimes.millis(20_000),
                    () -> tryLockQuietly(lock));
            CountDownLatch acquired = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                try (Cerberus second = Cerberus.builder().engine(servers.uri()).build()) {
                    DistributedLock same = second.lock("after-failover");
                    if (same.tryLock(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS)) {
                        acquired.countDown();
                        same.unlock();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            waiter.start();
            Poll.untilWaiting(waiter, TestTimes.millis(10_000));
            lock.unlock();
            assertThat(acquired.await(TestTimes.millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            waiter.join();
        }
    }

    @Test
    void aSentinelUriNamesItsMaster() {
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("redis-sentinel://127.0.0.1:26379")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("#mymaster");
    }
}
