package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.EngineSwitchEvent;
import io.cerberus.EngineUnavailableException;
import io.cerberus.FailoverPolicy;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.TestTimes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Several engines on real servers: Redis killed, with and without automatic failover. */
@Timeout(120)
class RedisFailoverTest {
    @TempDir
    Path dir;

    private Cerberus client(RedisServer redis, boolean failover) {
        return client(redis, failover, Duration.ofSeconds(1));
    }

    private Cerberus client(RedisServer redis, boolean failover, Duration connectTimeout) {
        var builder = Cerberus.builder()
                .engine("redis", redis.uri())
                .engine("file", "file:" + dir)
                .defaultLease(Duration.ofSeconds(1))
                .connectTimeout(connectTimeout);
        if (failover) {
            builder.failover(FailoverPolicy.after(Duration.ofMillis(500)).checkEvery(Duration.ofMillis(100)));
        }
        return builder.build();
    }

    /** Threads of several clients taking one lock in a loop, counting overlaps and where each grant came from. */
    private static final class Workload {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();
        final Map<String, LongAdder> grants = new ConcurrentHashMap<>();
        /** When each thread was first granted the lock by the file engine, on the monotonic clock. */
        final Map<String, Long> firstFileGrant = new ConcurrentHashMap<>();
        /** How long each attempt waits: long enough that threads are waiting on redis when it dies. */
        volatile Duration wait = Duration.ofMillis(300);

        final LongAdder unavailable = new LongAdder();
        final List<Thread> threads = new ArrayList<>();
        volatile boolean stopped;
        /**
         * Set when redis dies: a holder there keeps using what it protects until its lease's time is up, as a holder
         * that is never told (paused, cut off) does; only the lock-delay keeps the switched clients out meanwhile.
         */
        volatile boolean holdWhileValid;

        Workload(List<Cerberus> clients, int threadsPerClient) {
            for (Cerberus client : clients) {
                for (int i = 0; i < threadsPerClient; i++) {
                    Thread thread = new Thread(() -> loop(client), "worker-" + threads.size());
                    threads.add(thread);
                    thread.start();
                }
            }
        }

        private void loop(Cerberus client) {
            while (!stopped) {
                Optional<Lease> lease;
                try {
                    lease = client.lock("stock").tryAcquire(wait);
                } catch (EngineUnavailableException e) {
                    unavailable.increment();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                    continue;
                } catch (InterruptedException e) {
                    return;
                }
                if (lease.isEmpty()) {
                    continue;
                }
                long leaseEnds = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                grants.computeIfAbsent(lease.get().engineName(), k -> new LongAdder())
                        .increment();
                if (lease.get().engineName().equals("file")) {
                    firstFileGrant.putIfAbsent(Thread.currentThread().getName(), System.nanoTime());
                }
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                while (holdWhileValid
                        && !stopped
                        && lease.get().engineName().equals("redis")
                        && System.nanoTime() - leaseEnds < 0) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
                inside.decrementAndGet();
                try {
                    lease.get().close();
                } catch (LockLostException | EngineUnavailableException e) {
                    // the engine died under the hold: the holder has already stopped using what it protected
                }
            }
        }

        long grantsOn(String engine) {
            LongAdder count = grants.get(engine);
            return count == null ? 0 : count.sum();
        }

        void stop() throws InterruptedException {
            stopped = true;
            for (Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            }
        }
    }

    @Test
    void whenRedisDiesFailoverMovesAcquisitionsToTheFileEngineAndMutualExclusionHoldsAcrossTheSwitch()
            throws Exception {
        try (RedisServer redis = RedisServer.start();
                // the default command timeout: no wait on the dead server may last that long
                Cerberus first = client(redis, true, Duration.ofSeconds(10));
                Cerberus second = client(redis, true, Duration.ofSeconds(10))) {
            BlockingQueue<EngineSwitchEvent> switches = new LinkedBlockingQueue<>();
            first.onEngineSwitch(switches::add);
            second.onEngineSwitch(switches::add);
            Workload work = new Workload(List.of(first, second), 4);
            work.wait = Duration.ofSeconds(10);
            try {
                Poll.until(
                        "grants on redis",
                        TestTimes.scaled(Duration.ofSeconds(20)),
                        () -> work.grantsOn("redis") >= 20);
                long killedAt = System.nanoTime();
                work.holdWhileValid =
                        true; // a holder on redis now stays inside until its lease runs out: the lock-delay must cover
                // it
                redis.kill();

                for (int i = 0; i < 2; i++) {
                    EngineSwitchEvent event = switches.poll(
                            TestTimes.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(event).as("switch %d of 2", i + 1).isNotNull();
                    assertThat(event.reason()).isEqualTo(EngineSwitchEvent.Reason.FAILOVER);
                    assertThat(event.to()).isEqualTo("file");
                }
                long switchedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                Poll.until(
                        "grants on the file engine",
                        TestTimes.scaled(Duration.ofSeconds(20)),
                        () -> work.grantsOn("file") >= 20);
                Poll.until(
                        "every thread to be granted on the file engine",
                        TestTimes.scaled(Duration.ofSeconds(20)),
                        () -> work.firstFileGrant.size() == work.threads.size());
                long servingMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                long slowestMillis = TimeUnit.NANOSECONDS.toMillis(work.firstFileGrant.values().stream()
                        .mapToLong(at -> at - killedAt)
                        .max()
                        .orElseThrow());
                System.out.println("redis killed: both clients switched after " + switchedMillis
                        + " ms (failover after 500ms unhealthy),"
                        + " 20 grants on the file engine after " + servingMillis + " ms (lock-delay 1s); grants redis="
                        + work.grantsOn("redis") + " file=" + work.grantsOn("file") + ", calls refused as unavailable="
                        + work.unavailable.sum()
                        + ", every thread granted on the file engine " + slowestMillis + " ms after the kill");
                work.stop();
                assertThat(work.overlaps.get()).as("two holders at once").isZero();
                // threads waiting on redis when it died go on on the file engine: each is granted there after
                // unhealthyFor (500 ms) and the lock-delay (the 1 s lease), not after a 10 s command timeout
                assertThat(slowestMillis)
                        .as("from the kill to the last thread's first grant on the file engine")
                        .isLessThan(TestTimes.scaled(Duration.ofMillis(500 + 1_000 + 1_000))
                                .toMillis());
            } finally {
                work.stop();
            }
            assertThat(first.currentEngine()).isEqualTo("file");
            assertThat(second.currentEngine()).isEqualTo("file");
        }
    }

    @Test
    void withoutFailoverCallersGetEngineUnavailableNamingRedis() throws Exception {
        try (RedisServer redis = RedisServer.start();
                Cerberus cerberus = client(redis, false)) {
            assertThat(cerberus.lock("stock").tryLock()).isTrue();
            cerberus.lock("stock").unlock();
            redis.kill();
            assertThatThrownBy(() -> cerberus.lock("stock").tryLock())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(redis.uri());
            assertThat(cerberus.currentEngine()).isEqualTo("redis");
        }
    }
}
