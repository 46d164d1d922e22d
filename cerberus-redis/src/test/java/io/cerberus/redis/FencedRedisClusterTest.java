package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.fencing.StaleFenceException;
import io.cerberus.servers.RedisCluster;
import io.cerberus.servers.RedisServer;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Fenced writes and reads on a real Redis Cluster: every script's keys on one slot, whatever the key. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FencedRedisClusterTest {
    @RegisterExtension
    static final ServerExtension<RedisCluster> CLUSTER = RedisClusterTest.sharedCluster();

    private RedisClusterClient client;
    private StatefulRedisClusterConnection<String, String> connection;
    private FencedRedis fenced;
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void connect() {
        client = RedisClusterClient.create(
                RedisURI.create("127.0.0.1", CLUSTER.get().nodes().get(0).port()));
        connection = client.connect();
        fenced = FencedRedis.of(connection);
    }

    @AfterEach
    void disconnect() {
        connection.close();
        client.shutdown();
    }

    private static Fence fence(long token) {
        return new Fence(0, token);
    }

    /** Keys of every shape, on many slots. */
    private List<String> keys() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            keys.add("order:" + run + ":" + i);
            keys.add("user:{" + run + i + "}:profile");
            keys.add("x{" + run + i);
        }
        return keys;
    }

    @Test
    void everyCommandRunsOnTheSlotOfItsKey() {
        List<String> keys = keys();
        Set<Integer> masters = new HashSet<>();
        for (String key : keys) {
            masters.add(
                    CLUSTER.get().masterOf(SlotHash.getSlot(key)).orElseThrow().port());
            fenced.set(fence(2), key, "v", Duration.ofMinutes(5));
            assertThatThrownBy(() -> fenced.set(fence(1), key, "stale")).isInstanceOf(StaleFenceException.class);
            assertThat(fenced.get(fence(3), key)).contains("v");
            assertThat(fenced.del(fence(3), key)).isTrue();
            assertThatThrownBy(() -> fenced.set(fence(2), key, "again")).isInstanceOf(StaleFenceException.class);
            assertThat(fenced.fence(key)).contains(fence(3));
            assertThat(connection.sync().exists(key)).isZero();
        }
        assertThat(masters).as("the keys' masters").hasSizeGreaterThan(1);
    }

    @Test
    void hashesWithTheSameTagShareASlotAndKeepTheirOwnFences() {
        String profile = "user:{" + run + "}:profile";
        String orders = "user:{" + run + "}:orders";
        fenced.hset(fence(5), profile, Map.of("name", "Ada", "city", "London"));
        fenced.hset(fence(2), orders, "1", "widget");

        assertThat(fenced.hget(fence(5), profile, "name")).contains("Ada");
        assertThatThrownBy(() -> fenced.hset(fence(4), profile, "name", "Eve")).isInstanceOf(StaleFenceException.class);
        fenced.hset(fence(4), orders, "2", "gadget");
        assertThat(connection.sync().hgetall(orders)).containsOnlyKeys("1", "2");
    }

    @Test
    void theScriptsRunAgainAfterEveryNodeForgotThem() {
        String key = "order:" + run + ":flushed";
        fenced.set(fence(1), key, "before");
        flushScripts();
        fenced.set(fence(2), key, "after");
        flushScripts();
        assertThat(fenced.get(fence(2), key)).contains("after");
        flushScripts();
        assertThatThrownBy(() -> fenced.set(fence(1), key, "stale")).isInstanceOf(StaleFenceException.class);
    }

    @Test
    void theLateWriteOfAHolderPausedPastItsLeaseIsRefused() throws Exception {
        String key = "counter:{" + run + "}";
        String namespace = "fenced-" + run;
        try (Cerberus a = Cerberus.builder()
                        .engine(CLUSTER.uri())
                        .namespace(namespace)
                        .build();
                Cerberus b = Cerberus.builder()
                        .engine(CLUSTER.uri())
                        .namespace(namespace)
                        .build()) {
            Lease first = a.lock("counter").acquire(Duration.ofSeconds(5), TestTimes.millis(300));
            Fence aFence = Fence.of(first);
            assertThat(fenced.get(aFence, key)).isEmpty();
            Poll.until("the first holder's lease to run out", TestTimes.millis(10_000), () -> !first.isValid());

            try (Lease second = b.lock("counter").acquire(Duration.ofSeconds(10))) {
                Fence bFence = Fence.of(second);
                assertThat(fenced.get(bFence, key)).isEmpty();
                fenced.set(bFence, key, "1");
                assertThatThrownBy(() -> fenced.set(aFence, key, "1 from the paused holder"))
                        .isInstanceOfSatisfying(
                                StaleFenceException.class,
                                refused -> assertThat(refused.newest()).isEqualTo(bFence));
            }
            assertThat(connection.sync().get(key)).isEqualTo("1");
        }
    }

    private static void flushScripts() {
        for (RedisServer node : CLUSTER.get().nodes()) {
            if (node.isRunning()) {
                RedisClient direct = RedisClient.create(RedisURI.create("127.0.0.1", node.port()));
                try (StatefulRedisConnection<String, String> admin = direct.connect()) {
                    admin.sync().scriptFlush();
                } finally {
                    direct.shutdown();
                }
            }
        }
    }
}
