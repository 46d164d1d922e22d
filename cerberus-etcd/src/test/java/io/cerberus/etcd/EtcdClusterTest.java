package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.servers.EtcdCluster;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Locks on a real 3-member etcd cluster while members die and come back. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EtcdClusterTest {
    /** Longer than an election on a busy machine: member 0 may be the leader, and requests wait for the next one. */
    private static final Duration TIMEOUT = Duration.ofSeconds(4);

    private EtcdCluster cluster;
    private Cerberus holder;
    private Cerberus waiter;

    @BeforeEach
    void start() {
        cluster = EtcdCluster.start();
        holder = connect();
        waiter = connect();
    }

    private Cerberus connect() {
        // the first connect may come before the cluster has elected a leader
        Cerberus[] connected = new Cerberus[1];
        Poll.until("the cluster to grant a lease", TestTimes.millis(20_000), () -> {
            try {
                connected[0] = Cerberus.builder()
                        .engine(cluster.uri() + "?ttl=5")
                        .namespace("cluster")
                        .connectTimeout(TIMEOUT)
                        .build();
                return true;
            } catch (EngineUnavailableException e) {
                return false;
            }
        });
        return connected[0];
    }

    @AfterEach
    void stop() {
        waiter.close();
        holder.close();
        cluster.close();
    }

    @Test
    void oneMemberDownWorkGoesOnTwoDownFailsCleanlyRestartResumes() throws Exception {
        DistributedLock held = holder.lock("work");
        held.lock();
        long fence = held.lease().fencingToken();
        DistributedLock waiting = waiter.lock("work");
        CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
            try {
                if (!waiting.tryLock(60, TimeUnit.SECONDS)) {
                    return -1L;
                }
                long token = waiting.lease().fencingToken();
                waiting.unlock();
                return token;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -2L;
            }
        });

        cluster.member(0).kill();
        DistributedLock other = holder.lock("during-one-down");
        assertThat(other.tryLock(10, TimeUnit.SECONDS))
                .as("a new lock with one member down")
                .isTrue();
        other.unlock();
        assertThat(held.lease().isValid()).as("the hold survives one member").isTrue();
        held.unlock();
        assertThat(next.get(20, TimeUnit.SECONDS))
                .as("the waiter got the lock after the release")
                .isGreaterThan(fence);

        cluster.member(1).kill();
        DistributedLock noMajority = waiter.lock("no-majority");
        long start = System.nanoTime();
        assertThatThrownBy(() -> noMajority.tryLock(5, TimeUnit.SECONDS))
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("127.0.0.1");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("fails within the wait")
                .isLessThan(Duration.ofSeconds(5).plus(TIMEOUT).plus(TestTimes.millis(1000)));

        cluster.member(0).restart();
        cluster.member(1).restart();
        DistributedLock after = waiter.lock("after-restart");
        Poll.until("the same client to lock again", TestTimes.millis(30_000), () -> {
            try {
                boolean locked = after.tryLock(1, TimeUnit.SECONDS);
                if (locked) {
                    after.unlock();
                }
                return locked;
            } catch (EngineUnavailableException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }
}
