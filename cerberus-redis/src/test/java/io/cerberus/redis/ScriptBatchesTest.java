package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.spi.LockKey;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Script batches on a real redis-server: calls made while {@link ScriptBatches#IN_FLIGHT} others are
 * unanswered (the server is stopped with SIGSTOP, so they wait for certain) go as one script call, and
 * each is answered as if it had been sent alone.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ScriptBatchesTest {
    private static RedisWithAdmin server;
    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private ScriptBatches batches;
    private String namespace;

    @BeforeAll
    static void startServer() {
        server = RedisWithAdmin.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @BeforeEach
    void connect() {
        client = RedisClient.create(server.uri());
        connection = client.connect();
        batches = new ScriptBatches(connection.async(), true);
        namespace = "batch-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void disconnect() {
        if (server.isPaused()) {
            server.resume();
        }
        connection.close();
        client.shutdown();
    }

    private String[] keys(String name) {
        return LockKeys.of(new LockKey(namespace, name)).all(false);
    }

    private CompletableFuture<List<?>> acquire(String name, String token) {
        return batches.run(LockScripts.ACQUIRE, keys(name), token, "exclusive", "30000", "test", "10000", "2000");
    }

    private CompletableFuture<Long> release(String name, String token) {
        return batches.run(LockScripts.RELEASE, keys(name), token, "exclusive", "channel-" + name);
    }

    /** Stops the server and makes {@link ScriptBatches#IN_FLIGHT} calls, which wait on the connection. */
    private List<CompletableFuture<List<?>>> fillTheConnection() {
        server.pause();
        List<CompletableFuture<List<?>>> sent = new ArrayList<>();
        for (int i = 0; i < ScriptBatches.IN_FLIGHT; i++) {
            sent.add(acquire("sent-" + i, "t-sent-" + i));
        }
        return sent;
    }

    private static long scriptCalls(Map<String, Long> before, Map<String, Long> after) {
        return after.getOrDefault("evalsha", 0L)
                - before.getOrDefault("evalsha", 0L)
                + after.getOrDefault("eval", 0L)
                - before.getOrDefault("eval", 0L);
    }

    @Test
    void callsMadeWhileOthersAreUnansweredGoAsOneScriptCallAnsweredAsIfEachWasSentAlone() throws Exception {
        // once first, so the server has both scripts and each is one EVALSHA below
        List<CompletableFuture<List<?>>> warmUp = fillTheConnection();
        warmUp.add(acquire("warm-up-a", "t-a"));
        warmUp.add(acquire("warm-up-b", "t-b"));
        server.resume();
        for (CompletableFuture<List<?>> reply : warmUp) {
            reply.get(10, TimeUnit.SECONDS);
        }
        Map<String, Long> before = server.commandCalls();
        List<CompletableFuture<List<?>>> sent = fillTheConnection();
        List<CompletableFuture<List<?>>> queued = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            queued.add(acquire("queued-" + i, "t-queued-" + i));
        }
        CompletableFuture<List<?>> first = acquire("shared", "t-first");
        CompletableFuture<List<?>> second = acquire("shared", "t-second");
        server.resume();

        for (CompletableFuture<List<?>> reply : sent) {
            assertThat(reply.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        }
        long previous = 0;
        for (CompletableFuture<List<?>> reply : queued) {
            List<?> answer = reply.get(10, TimeUnit.SECONDS);
            assertThat(answer.get(0)).as("granted").isEqualTo(1L);
            long fence = (Long) answer.get(1);
            assertThat(fence).as("fences in the order the calls were made").isGreaterThan(previous);
            previous = fence;
        }
        assertThat(first.get(10, TimeUnit.SECONDS).get(0))
                .as("the first of two on one name")
                .isEqualTo(1L);
        List<?> busy = second.get(10, TimeUnit.SECONDS);
        assertThat(busy.get(0)).as("the second of two on one name").isEqualTo(0L);
        assertThat((Long) busy.get(1)).as("ms to wait before trying again").isBetween(1L, 2000L);
        assertThat(scriptCalls(before, server.commandCalls()))
                .as("script calls for %d acquires: the 22 queued ones in one", ScriptBatches.IN_FLIGHT + 22)
                .isEqualTo(ScriptBatches.IN_FLIGHT + 1L);
        assertThat(server.admin().hget(keys("queued-7")[0], "token")).isEqualTo("t-queued-7");
    }

    @Test
    void releasesGoInBatchesTooAndOnlyAHolderReleases() throws Exception {
        assertThat(acquire("held", "t-held").get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        List<CompletableFuture<List<?>>> sent = fillTheConnection();
        CompletableFuture<Long> notTheHolder = release("held", "t-other");
        CompletableFuture<Long> holder = release("held", "t-held");
        CompletableFuture<Long> again = release("held", "t-held");
        server.resume();

        for (CompletableFuture<List<?>> reply : sent) {
            assertThat(reply.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        }
        assertThat(notTheHolder.get(10, TimeUnit.SECONDS)).isZero();
        assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
        assertThat(again.get(10, TimeUnit.SECONDS)).as("released already").isZero();
        assertThat(server.admin().exists(keys("held")[0])).isZero();
    }

    @Test
    void aCallThatFailsInABatchFailsAloneAndTheOthersAreAnswered() throws Exception {
        server.admin().set(keys("not-a-lock")[0], "a string a neighbour wrote");
        List<CompletableFuture<List<?>>> sent = fillTheConnection();
        CompletableFuture<List<?>> before = acquire("before", "t-before");
        CompletableFuture<List<?>> failing = acquire("not-a-lock", "t-failing");
        CompletableFuture<List<?>> after = acquire("after", "t-after");
        server.resume();

        for (CompletableFuture<List<?>> reply : sent) {
            assertThat(reply.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        }
        assertThat(before.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        assertThat(after.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(RedisCommandExecutionException.class)
                .hasMessageContaining("WRONGTYPE");
    }

    @Test
    void aQueuedCallGivenUpBeforeItIsSentNeverReachesTheServer() throws Exception {
        List<CompletableFuture<List<?>>> sent = fillTheConnection();
        CompletableFuture<List<?>> givenUp = acquire("given-up", "t-given-up");
        CompletableFuture<List<?>> kept = acquire("kept", "t-kept");
        givenUp.cancel(false);
        server.resume();

        for (CompletableFuture<List<?>> reply : sent) {
            assertThat(reply.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        }
        assertThat(kept.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        assertThat(server.admin().exists(keys("given-up")[0]))
                .as("the lock the caller gave up before its call was sent")
                .isZero();
    }

    @Test
    void withoutBatchingEveryCallIsItsOwnScriptCall() throws Exception {
        ScriptBatches alone = new ScriptBatches(connection.async(), false);
        Map<String, Long> before = server.commandCalls();
        server.pause();
        List<CompletableFuture<List<?>>> replies = new ArrayList<>();
        for (int i = 0; i < ScriptBatches.IN_FLIGHT + 5; i++) {
            replies.add(alone.run(
                    LockScripts.ACQUIRE, keys("alone-" + i), "t" + i, "exclusive", "30000", "test", "10000", "2000"));
        }
        server.resume();
        for (CompletableFuture<List<?>> reply : replies) {
            assertThat(reply.get(10, TimeUnit.SECONDS).get(0)).isEqualTo(1L);
        }
        assertThat(scriptCalls(before, server.commandCalls())).isEqualTo(ScriptBatches.IN_FLIGHT + 5L);
    }
}
