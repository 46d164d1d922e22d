package io.cerberus.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One master of a Redlock engine: its Lettuce client, its command connection and, once a waiter
 * needs it, its pub/sub connection.
 *
 * <p>A node that could not be reached when the engine opened (or whose first pub/sub connect
 * failed) is connected again in the background, at most once per {@link #RECONNECT_PAUSE}, when
 * the engine next needs it; until then it counts as down. Once connected, Lettuce reconnects by
 * itself after a loss and rejects commands while disconnected, so a down node fails fast.
 */
final class RedlockNode implements LockWaiters.PubSubSource, AutoCloseable {
    /** Shortest pause between two connect attempts of a node that is down. */
    static final Duration RECONNECT_PAUSE = Duration.ofSeconds(1);

    private final String address;
    private final RedisClient client;
    private final RedisURI uri;
    private final Duration connectTimeout;
    private final Executor connector;
    private final Object guard = new Object();
    private volatile StatefulRedisConnection<String, String> connection;
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;
    private CompletableFuture<StatefulRedisConnection<String, String>> connecting;
    private CompletableFuture<StatefulRedisPubSubConnection<String, String>> connectingPubSub;
    private long nextAttemptNanos;
    private long nextPubSubAttemptNanos;
    private volatile String problem = "not connected yet";
    /** When the node last answered a command or connected (System.nanoTime()). */
    private volatile long lastAnswerNanos = System.nanoTime();

    private volatile boolean closed;

    /**
     * @param address {@code host:port}, for messages (never carries the password)
     * @param client the node's client
     * @param uri its URI (with credentials and command timeout)
     * @param connectTimeout bound of one connect
     * @param connector runs the blocking connects
     */
    RedlockNode(String address, RedisClient client, RedisURI uri, Duration connectTimeout, Executor connector) {
        this.address = address;
        this.client = client;
        this.uri = uri;
        this.connectTimeout = connectTimeout;
        this.connector = connector;
    }

    /** @return {@code host:port} */
    String address() {
        return address;
    }

    /** Notes that the node answered a command, however late. */
    void answered() {
        lastAnswerNanos = System.nanoTime();
    }

    /**
     * @param period a period
     * @return whether the node answered nothing (and did not connect) for that long: a node that
     *     merely missed a short node timeout now and then is slow, one silent this long is down
     */
    boolean silentFor(Duration period) {
        return System.nanoTime() - lastAnswerNanos >= period.toNanos();
    }

    /** @return why the node is down, when it is */
    String problem() {
        return problem;
    }

    /**
     * Starts connecting if the node has no connection and none is being made.
     *
     * @return completes with the connection, or exceptionally with why it failed
     */
    CompletableFuture<StatefulRedisConnection<String, String>> connect() {
        synchronized (guard) {
            if (connection != null) {
                return CompletableFuture.completedFuture(connection);
            }
            if (connecting == null || connecting.isDone()) {
                nextAttemptNanos = System.nanoTime() + RECONNECT_PAUSE.toNanos();
                CompletableFuture<StatefulRedisConnection<String, String>> attempt = CompletableFuture.supplyAsync(
                        () -> RedisEngineProvider.connect(
                                () -> client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture(),
                                connectTimeout,
                                address),
                        connector);
                // the caller's future completes only after the connection is recorded
                connecting = attempt.whenComplete((opened, failure) -> connected(opened, failure));
            }
            return connecting;
        }
    }

    private void connected(StatefulRedisConnection<String, String> opened, Throwable failure) {
        synchronized (guard) {
            connecting = null;
            if (failure != null) {
                Throwable root = failure;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                problem = "not connected: " + root.getMessage();
                return;
            }
            if (closed) {
                opened.closeAsync();
                return;
            }
            lastAnswerNanos = System.nanoTime();
            connection = opened;
        }
    }

    /**
     * @return the node's commands if it is connected now; else empty, and a background connect
     *     is started unless one was tried within {@link #RECONNECT_PAUSE}
     */
    RedisAsyncCommands<String, String> commandsOrNull() {
        StatefulRedisConnection<String, String> open = connection;
        if (open != null) {
            if (!open.isOpen()) {
                problem = "connection lost, reconnecting";
                return null;
            }
            return open.async();
        }
        synchronized (guard) {
            if (!closed && (connecting == null || connecting.isDone()) && System.nanoTime() - nextAttemptNanos >= 0) {
                connect();
            }
        }
        return null;
    }

    /**
     * Opens the pub/sub connection of the node if it has none (in the background; at most once per
     * {@link #RECONNECT_PAUSE} while it fails).
     *
     * @param onOpen told, once, of the new connection
     */
    @Override
    public void ensurePubSub(Consumer<StatefulRedisPubSubConnection<String, String>> onOpen) {
        synchronized (guard) {
            if (closed
                    || pubSub != null
                    || connectingPubSub != null
                    || System.nanoTime() - nextPubSubAttemptNanos < 0) {
                return;
            }
            nextPubSubAttemptNanos = System.nanoTime() + RECONNECT_PAUSE.toNanos();
            CompletableFuture<StatefulRedisPubSubConnection<String, String>> attempt = CompletableFuture.supplyAsync(
                    () -> RedisEngineProvider.connect(
                            () -> client.connectPubSubAsync(StringCodec.UTF8, uri)
                                    .toCompletableFuture(),
                            connectTimeout,
                            address),
                    connector);
            connectingPubSub = attempt;
            attempt.whenComplete((opened, failure) -> {
                synchronized (guard) {
                    connectingPubSub = null;
                    if (failure != null) {
                        return;
                    }
                    if (closed) {
                        opened.closeAsync();
                        return;
                    }
                    pubSub = opened;
                }
                onOpen.accept(opened);
            });
        }
    }

    /** @return the pub/sub connection, or null if it is not open yet */
    @Override
    public StatefulRedisPubSubConnection<String, String> pubSubOrNull() {
        return pubSub;
    }

    @Override
    public void close() {
        StatefulRedisConnection<String, String> open;
        StatefulRedisPubSubConnection<String, String> openPubSub;
        synchronized (guard) {
            closed = true;
            open = connection;
            openPubSub = pubSub;
            connection = null;
            pubSub = null;
        }
        try {
            if (openPubSub != null) {
                openPubSub.closeAsync();
            }
            if (open != null) {
                open.closeAsync();
            }
        } finally {
            client.shutdownAsync(0, connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public String toString() {
        return address;
    }
}
