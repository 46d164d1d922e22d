package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The etcd engine in one JVM with the Redis engine, as in an application that uses both: this
 * module's tests have cerberus-redis on their class path, so jetcd's gRPC runs on the netty that
 * Lettuce brings. gRPC-Java up to 1.64 reads HTTP/2 frames wrongly on netty 4.1.111 and later
 * (its cumulator of incoming buffers relied on the old index behaviour of netty's composite
 * buffers): calls failed with "Frame length ... exceeds maximum", "Encountered end-of-stream
 * mid-frame" and the like, and held locks were reported lost. Heavy traffic on both engines at
 * once, against real servers, shows whether the two clients get on.
 */
class EtcdBesideRedisTest {
    private static final int CYCLES_PER_LOCK_WORKER = 400;
    private static final int REPLAYS = 60;
    /** Large enough that each reply spans many socket reads, so the HTTP/2 reader must piece frames together. */
    private static final int RESULT_CHARS = 600 * 1024;

    @RegisterExtension
    static final ServerExtension<EtcdServer> ETCD = ServerExtension.perClass(EtcdServer::start);

    @RegisterExtension
    static final ServerExtension<RedisServer> REDIS = ServerExtension.perClass(RedisServer::start);

    @Test
    void theClassPathHasANettyWhoseBuffersBrokeOldGrpc() {
        // the buffer change of netty 4.1.111 (kept in 4.2) broke gRPC's reader up to 1.64; on an older
        // netty the heavy-traffic test below would prove nothing
        String buffer = io.netty.util.Version.identify().get("netty-buffer").artifactVersion();
        assertThat(Arrays.compare(releaseNumbers(buffer), new int[] {4, 1, 111}))
                .as("netty-buffer " + buffer + " against 4.1.111")
                .isNotNegative();
    }

    @Test
    void gRpcAndLettuceShareOneNettyMinorVersion() {
        // jetcd's own gRPC is built on netty 4.1, Lettuce on 4.2: this module names a gRPC built on 4.2
        Map<String, String> minors = new TreeMap<>();
        io.netty.util.Version.identify().forEach((artifact, version) -> {
            if (!artifact.startsWith("netty-tcnative")) {
                int[] numbers = releaseNumbers(version.artifactVersion());
                minors.put(artifact, numbers[0] + "." + numbers[1]);
            }
        });
        assertThat(minors).containsKeys("netty-buffer", "netty-codec-http2", "netty-transport");
        assertThat(new HashSet<>(minors.values()))
                .as("netty minor versions on the class path: " + minors)
                .hasSize(1);
    }

    /** @return the first three numbers of a netty version such as 4.2.17.Final */
    private static int[] releaseNumbers(String version) {
        return Arrays.stream(version.split("\\."))
                .limit(3)
                .mapToInt(Integer::parseInt)
                .toArray();
    }

    @Test
    void etcdLocksAndRepliesStayIntactUnderHeavyTrafficBesideTheRedisEngine() throws Exception {
        try (Cerberus onEtcd = Cerberus.builder()
                        .engine(ETCD.uri())
                        .namespace("beside-redis")
                        .build();
                Cerberus onRedis = Cerberus.builder()
                        .engine(REDIS.uri())
                        .namespace("beside-etcd")
                        .build()) {
            ExecutorService workers = Executors.newFixedThreadPool(4);
            AtomicBoolean etcdDone = new AtomicBoolean();
            try {
                AtomicInteger guarded = new AtomicInteger();
                List<Future<Integer>> etcdWork = new ArrayList<>();
                for (int worker = 0; worker < 2; worker++) {
                    etcdWork.add(workers.submit(() -> contendedCycles(onEtcd.lock("shared"), guarded)));
                }
                etcdWork.add(workers.submit(() -> largeReplays(onEtcd.idempotency(IdempotencyOptions.defaults()))));
                Future<Integer> redisWork = workers.submit(() -> {
                    int cycles = 0;
                    DistributedLock lock = onRedis.lock("busy");
                    while (!etcdDone.get()) {
                        lock.lock();
                        lock.unlock();
                        cycles++;
                    }
                    return cycles;
                });
                try {
                    long limit = TestTimes.scaled(Duration.ofSeconds(120)).toMillis();
                    for (Future<Integer> work : etcdWork) {
                        work.get(limit, TimeUnit.MILLISECONDS);
                    }
                } finally {
                    etcdDone.set(true);
                }
                assertThat(redisWork.get(
                                TestTimes.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                        .as("Redis lock cycles while etcd was busy")
                        .isPositive();
                assertThat(guarded.get())
                        .as("increments made under the etcd lock")
                        .isEqualTo(2 * CYCLES_PER_LOCK_WORKER);
            } finally {
                workers.shutdownNow();
            }
        }
    }

    /**
     * Lock cycles on one contended etcd lock, each a read and a write of a counter that a second
     * holder at the same time would lose; an unlock of a lock reported lost throws.
     */
    private static int contendedCycles(DistributedLock lock, AtomicInteger guarded) {
        for (int cycle = 0; cycle < CYCLES_PER_LOCK_WORKER; cycle++) {
            lock.lock();
            try {
                int seen = guarded.get();
                guarded.set(seen + 1);
            } finally {
                lock.unlock();
            }
        }
        return CYCLES_PER_LOCK_WORKER;
    }

    /** Stores one large result in etcd, then reads it back as replays, each a reply of many HTTP/2 frames. */
    private static int largeReplays(IdempotencyGuard guard) throws Exception {
        String result = "r".repeat(RESULT_CHARS);
        IdempotencyKey key = IdempotencyKey.of("report", "large-result", "payload");
        Callable<String> operation = () -> result;
        assertThat(guard.execute(key, Duration.ofMinutes(5), operation).executed())
                .isTrue();
        for (int replay = 0; replay < REPLAYS; replay++) {
            Outcome<String> outcome = guard.execute(key, Duration.ofMinutes(5), operation);
            assertThat(outcome.executed()).as("replay %d", replay).isFalse();
            assertThat(outcome.value()).as("replay %d", replay).isEqualTo(result);
        }
        return REPLAYS;
    }
}
