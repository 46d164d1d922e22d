package io.cerberus.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.servers.ZooKeeperEnsemble;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A 3-server ensemble: the leader is killed while locks are held and waited on. */
@Timeout(180)
class ZooKeeperEnsembleTest {

    @Test
    void killingTheLeaderNeverGivesTwoHoldersAndWorkResumesAfterTheElection() throws Exception {
        try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.start()) {
            List<Cerberus> clients = new ArrayList<>();
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            AtomicLong grants = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            try {
                for (int c = 0; c < 3; c++) {
                    Cerberus client = Cerberus.builder()
                            .engine(ensemble.uri() + "/ensemble?sessionTimeout=10s")
                            .connectTimeout(Duration.ofSeconds(5))
                            .build();
                    clients.add(client);
                    Thread worker = new Thread(
                            () -> {
                                while (!stop.get()) {
                                    try {
                                        Optional<Lease> lease =
                                                client.lock("leader-kill").tryAcquire(Duration.ofMillis(500));
                                        if (lease.isPresent()) {
                                            if (inside.incrementAndGet() != 1) {
                                                overlaps.incrementAndGet();
                                            }
                                            grants.incrementAndGet();
                                            LockSupport.parkNanos(2_000_000);
                                            inside.decrementAndGet();
                                            lease.get().close();
                                        }
                                    } catch (EngineUnavailableException | LockLostException e) {
                                        failures.incrementAndGet();
                                        LockSupport.parkNanos(50_000_000);
                                    } catch (InterruptedException e) {
                                        return;
                                    }
                                }
                            },
                            "worker-" + c);
                    workers.add(worker);
                    worker.start();
                }
                Poll.until(
                        "grants before the kill", TestTimes.scaled(Duration.ofSeconds(30)), () -> grants.get() >= 20);
                int leader = ensemble.awaitLeader(TestTimes.scaled(Duration.ofSeconds(30)));
                ensemble.member(leader).kill();
                long killedAt = System.nanoTime();
                long before = grants.get();
                ensemble.awaitLeader(TestTimes.scaled(Duration.ofSeconds(60)));
                try {
                    Poll.until(
                            "grants after the election",
                            TestTimes.scaled(Duration.ofSeconds(30)),
                            () -> grants.get() >= before + 20);
                } catch (AssertionError e) {
                    System.out.println("STUCK: grants " + grants.get() + " (before " + before + "), failures "
                            + failures.get() + ", inspect " + clients.get(0).inspect("") + ", threads "
                            + workers.stream()
                                    .map(t -> t.getName() + ":" + t.getState())
                                    .toList());
                    for (Thread t : workers) {
                        System.out.println(t.getName() + " "
                                + java.util.Arrays.toString(t.getStackTrace()).replace(", ", "\n  "));
                    }
                    throw e;
                }
                System.out.println(
                        "leader killed: 20 more grants " + (System.nanoTime() - killedAt) / 1_000_000 + " ms later; "
                                + failures.get() + " calls failed meanwhile; " + grants.get() + " grants in all");
            } finally {
                stop.set(true);
                for (Thread worker : workers) {
                    worker.join(TestTimes.scaled(Duration.ofSeconds(20)).toMillis());
                }
                clients.forEach(Cerberus::close);
            }
            assertThat(overlaps.get()).as("two holders at once").isZero();
        }
    }
}
