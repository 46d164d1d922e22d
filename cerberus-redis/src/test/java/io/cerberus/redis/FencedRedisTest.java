package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.Fence;
import io.cerberus.Lease;
import io.cerberus.fencing.FenceKeeper;
import io.cerberus.fencing.StaleFenceException;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Fenced writes and reads of application data on a real redis-server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencedRedisTest {
    @RegisterExtension
    static final ServerExtension<RedisWithAdmin> SERVER = ServerExtension.perClass(RedisWithAdmin::start);

    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private FencedRedis fenced;
    private String key;

    @BeforeEach
    void connect() {
        client = RedisClient.create(SERVER.uri());
        connection = client.connect();
        fenced = FencedRedis.of(connection);
        key = "order:" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void disconnect() {
        connection.close();
        client.shutdown();
    }

    private static Fence fence(long token) {
        return new Fence(0, token);
    }

    private String plainGet(String key) {
        return connection.sync().get(key);
    }

    @Test
    void aNewerOrEqualFenceIsApplied() {
        fenced.set(fence(5), key, "a");
        fenced.set(fence(5), key, "b");
        assertThat(plainGet(key)).isEqualTo("b");
        fenced.set(fence(7), key, "c");

        assertThat(plainGet(key)).isEqualTo("c");
        assertThat(fenced.fence(key)).contains(fence(7));
        assertThat(connection.sync().get(FencedRedis.fenceKey(key))).isEqualTo("0:7");
    }

    @Test
    void anOlderFenceIsRefusedWithTheNewestSeenAndTheDataUnchanged() {
        fenced.set(fence(7), key, "new");

        assertThatThrownBy(() -> fenced.set(fence(6), key, "old"))
                .isInstanceOfSatisfying(StaleFenceException.class, refused -> {
                    assertThat(refused.resource()).contains(key);
                    assertThat(refused.refused()).isEqualTo(fence(6));
                    assertThat(refused.newest()).isEqualTo(fence(7));
                })
                .hasMessageContaining(key)
                .hasMessageContaining("0:7");
        assertThat(plainGet(key)).isEqualTo("new");
        assertThat(fenced.fence(key)).contains(fence(7));
    }

    @Test
    void fencesAreOrderedByEpochThenTokenExactlyAtAnySize() {
        fenced.set(new Fence(0, Long.MAX_VALUE), key, "epoch 0");
        assertThatThrownBy(() -> fenced.set(new Fence(0, Long.MAX_VALUE - 1), key, "lower by one"))
                .as("tokens equal as doubles but not as numbers")
                .isInstanceOf(StaleFenceException.class);
        fenced.set(new Fence(1, 1), key, "epoch 1");
        assertThatThrownBy(() -> fenced.set(new Fence(0, Long.MAX_VALUE), key, "older epoch"))
                .isInstanceOf(StaleFenceException.class);
        fenced.set(new Fence(1, 10), key, "longer token");
        assertThatThrownBy(() -> fenced.set(new Fence(1, 9), key, "shorter token"))
                .isInstanceOf(StaleFenceException.class);

        assertThat(plainGet(key)).isEqualTo("longer token");
        assertThat(fenced.fence(key)).contains(new Fence(1, 10));
    }

    @Test
    void theLateWriteOfAHolderPausedPastItsLeaseIsRefused() throws Exception {
        String namespace = "fenced-" + UUID.randomUUID().toString().substring(0, 8);
        try (Cerberus a = Cerberus.builder()
                        .engine(SERVER.uri())
                        .namespace(namespace)
                        .build();
                Cerberus b = Cerberus.builder()
                        .engine(SERVER.uri())
                        .namespace(namespace)
                        .build()) {
            fenced.set(fence(0), key, "0");
            Lease first = a.lock("counter").acquire(Duration.ofSeconds(5), TestTimes.millis(300));
            Fence aFence = Fence.of(first);
            long aRead = Long.parseLong(fenced.get(aFence, key).orElseThrow());
            // a pauses: no renewal (an explicit lease), the engine lets the lock go
            Poll.until("the first holder's lease to run out", TestTimes.millis(10_000), () -> !first.isValid());

            try (Lease second = b.lock("counter").acquire(Duration.ofSeconds(10))) {
                Fence bFence = Fence.of(second);
                assertThat(bFence.isOlderThan(aFence)).isFalse();
                assertThat(bFence).isNotEqualTo(aFence);
                long bRead = Long.parseLong(fenced.get(bFence, key).orElseThrow());
                fenced.set(bFence, key, Long.toString(bRead + 1));

                assertThatThrownBy(() -> fenced.set(aFence, key, Long.toString(aRead + 1)))
                        .isInstanceOfSatisfying(
                                StaleFenceException.class,
                                refused -> assertThat(refused.newest()).isEqualTo(bFence));
            }
            assertThat(plainGet(key)).isEqualTo("1");
        }
    }

    @Test
    void aFencedReadStopsAnOlderHolderFromWritingBack() {
        fenced.set(fence(1), key, "10");
        assertThat(fenced.get(fence(2), key)).contains("10");
        assertThat(fenced.get(fence(3), key)).contains("10");

        assertThatThrownBy(() -> fenced.set(fence(2), key, "11"))
                .as("the older reader writes back after the newer one read")
                .isInstanceOfSatisfying(
                        StaleFenceException.class,
                        refused -> assertThat(refused.newest()).isEqualTo(fence(3)));
        assertThatThrownBy(() -> fenced.get(fence(2), key)).isInstanceOf(StaleFenceException.class);
        fenced.set(fence(3), key, "11");
        assertThat(plainGet(key)).isEqualTo("11");
    }

    @Test
    void aReadOfAMissingKeyIsEmptyAndStillRecordsTheFence() {
        assertThat(fenced.get(fence(4), key)).isEmpty();
        assertThat(connection.sync().exists(key)).isZero();

        assertThatThrownBy(() -> fenced.set(fence(3), key, "created by an older holder"))
                .isInstanceOf(StaleFenceException.class);
        assertThat(connection.sync().exists(key)).isZero();
    }

    @Test
    void aDeleteKeepsItsFenceSoAnOlderHolderCannotCreateTheKeyAgain() {
        fenced.set(fence(4), key, "v");
        assertThat(fenced.del(fence(5), key)).isTrue();
        assertThat(connection.sync().exists(key)).isZero();
        assertThat(fenced.fence(key)).contains(fence(5));
        assertThat(connection.sync().pttl(FencedRedis.fenceKey(key)))
                .as("kept for ever")
                .isEqualTo(-1L);

        assertThatThrownBy(() -> fenced.set(fence(4), key, "again")).isInstanceOf(StaleFenceException.class);
        assertThatThrownBy(() -> fenced.del(fence(4), key)).isInstanceOf(StaleFenceException.class);
        assertThat(connection.sync().exists(key)).isZero();
        assertThat(fenced.del(fence(5), key)).as("nothing left to delete").isFalse();
    }

    @Test
    void aTombstoneLastsTheChosenRetention() {
        FencedRedis briefly = fenced.keepingFencesFor(Duration.ofMillis(400));
        briefly.set(fence(4), key, "v");
        assertThat(connection.sync().pttl(FencedRedis.fenceKey(key)))
                .as("the data has no expiry, so neither has its fence")
                .isEqualTo(-1L);
        briefly.del(fence(5), key);
        assertThat(connection.sync().pttl(FencedRedis.fenceKey(key))).isBetween(1L, 400L);

        Poll.until(
                "the tombstone to expire",
                TestTimes.millis(10_000),
                () -> briefly.fence(key).isEmpty());
        briefly.set(fence(4), key, "an older holder, after the retention");
        assertThat(plainGet(key)).isEqualTo("an older holder, after the retention");
    }

    @Test
    void theFenceOfExpiringDataOutlivesItByTheRetention() {
        fenced.set(fence(1), key, "v", Duration.ofSeconds(10));
        assertThat(connection.sync().pttl(key)).isBetween(1L, 10_000L);
        assertThat(connection.sync().pttl(FencedRedis.fenceKey(key))).isEqualTo(-1L);

        fenced.keepingFencesFor(Duration.ofSeconds(5)).set(fence(2), key, "v", Duration.ofSeconds(10));
        assertThat(connection.sync().pttl(FencedRedis.fenceKey(key))).isBetween(10_001L, 15_000L);

        fenced.set(fence(3), key, "no expiry");
        assertThat(connection.sync().pttl(key)).isEqualTo(-1L);
        assertThat(connection.sync().pttl(FencedRedis.fenceKey(key))).isEqualTo(-1L);
    }

    @Test
    void hashFieldsAreWrittenTogetherAndReadFenced() {
        fenced.hset(fence(1), key, Map.of("status", "paid", "amount", "42"));
        fenced.hset(fence(1), key, "note", "first");
        assertThat(connection.sync().hgetall(key))
                .containsExactlyInAnyOrderEntriesOf(Map.of("status", "paid", "amount", "42", "note", "first"));
        assertThat(fenced.hget(fence(2), key, "status")).contains("paid");
        assertThat(fenced.hget(fence(2), key, "missing")).isEmpty();

        assertThatThrownBy(() -> fenced.hset(fence(1), key, Map.of("status", "refunded", "amount", "0")))
                .isInstanceOf(StaleFenceException.class);
        assertThatThrownBy(() -> fenced.hget(fence(1), key, "status")).isInstanceOf(StaleFenceException.class);
        assertThat(connection.sync().hgetall(key))
                .containsEntry("status", "paid")
                .containsEntry("amount", "42");
        assertThat(connection.sync().hexists(key, FencedRedis.fenceKey(key)))
                .as("the fence is not a field")
                .isFalse();
    }

    @Test
    void theScriptsRunAgainAfterTheServerForgotThem() {
        fenced.set(fence(1), key, "before");
        SERVER.get().admin().scriptFlush();
        fenced.set(fence(2), key, "after");
        SERVER.get().admin().scriptFlush();
        assertThat(fenced.get(fence(2), key)).contains("after");
        SERVER.get().admin().scriptFlush();
        assertThatThrownBy(() -> fenced.set(fence(1), key, "stale")).isInstanceOf(StaleFenceException.class);
        SERVER.get().admin().scriptFlush();
        fenced.hset(fence(3), key + ":h", "f", "v");
        SERVER.get().admin().scriptFlush();
        assertThat(fenced.hget(fence(3), key + ":h", "f")).contains("v");
        SERVER.get().admin().scriptFlush();
        assertThat(fenced.del(fence(3), key)).isTrue();
    }

    @Test
    void keysWithHashTagsKeepTheirFenceOnTheirSlot() {
        for (String tagged : new String[] {"user:{42}:profile", "{42}", "a{b}c{d}", "x{y", "plain", "{x}", "x"}) {
            String fenceKey = FencedRedis.fenceKey(tagged);
            assertThat(SlotHash.getSlot(fenceKey)).as(fenceKey).isEqualTo(SlotHash.getSlot(tagged));
            assertThat(fenceKey).startsWith("cerberus:fence:{").endsWith("}:" + tagged);
        }
        assertThat(FencedRedis.fenceKey("{x}")).isNotEqualTo(FencedRedis.fenceKey("x"));

        String tagged = "{" + key + "}:lines";
        fenced.hset(fence(2), tagged, "1", "widget");
        assertThatThrownBy(() -> fenced.hset(fence(1), tagged, "1", "gadget")).isInstanceOf(StaleFenceException.class);
        assertThat(fenced.hget(fence(2), tagged, "1")).contains("widget");
    }

    @Test
    void keysWhoseFenceCouldNotShareTheirSlotAreRefused() {
        for (String bad : new String[] {"a}b", "{}x", "x{}"}) {
            assertThatThrownBy(() -> fenced.set(fence(1), bad, "v"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("hash tag")
                    .hasMessageContaining(bad);
        }
        assertThatThrownBy(() -> fenced.set(fence(1), FencedRedis.fenceKey(key), "v"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserved");
        assertThatThrownBy(() -> fenced.set(fence(1), "", "v")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> fenced.set(fence(1), key, "v", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least a millisecond");
        assertThatThrownBy(() -> fenced.hset(fence(1), key, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one field");
        assertThatThrownBy(() -> fenced.keepingFencesFor(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(connection.sync().exists(key, FencedRedis.fenceKey(key))).isZero();
    }

    @Test
    void aKeyOfTheWrongTypeIsRedissErrorAndLeavesTheFence() {
        fenced.hset(fence(1), key, "f", "v");
        assertThatThrownBy(() -> fenced.get(fence(2), key))
                .isInstanceOf(RedisCommandExecutionException.class)
                .hasMessageContaining("WRONGTYPE");
        assertThat(fenced.fence(key)).isEqualTo(Optional.of(fence(1)));
    }

    @Test
    void aFenceKeeperAdmitsNewerFencesPerResourceAndRefusesAnOlderOne() {
        FenceKeeper keeper = fenced.keeper();
        keeper.admit(key, fence(5));
        keeper.admit(key, fence(7));
        assertThatThrownBy(() -> keeper.admit(key, fence(6)))
                .isInstanceOf(StaleFenceException.class)
                .satisfies(e -> assertThat(((StaleFenceException) e).newest()).isEqualTo(fence(7)));
        assertThat(fenced.fence(key)).contains(fence(7));
        assertThatThrownBy(() -> fenced.set(fence(6), key, "late"))
                .as("a data key of the resource's name shares its fence")
                .isInstanceOf(StaleFenceException.class);
        assertThatThrownBy(() -> keeper.admit("r".repeat(513), fence(8)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("512");
    }
}
