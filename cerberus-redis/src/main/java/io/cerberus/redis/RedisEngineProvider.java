package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.Redaction;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.Transports;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Serves the Redis engine URIs:
 * <ul>
 *   <li>{@code redis://[user:password@]host[:port][/database][?timeout=5s]}: one server;
 *   <li>{@code redis-sentinel://[user:password@]sentinel1[:port],sentinel2[:port][/database]#master}:
 *       the master that the Sentinels name, followed across failovers;
 *   <li>{@code redis-cluster://[user:password@]seed1[:port],seed2[:port]}: a Redis Cluster, each
 *       lock on the node that owns its slot;
 * </ul>
 * and each with {@code rediss} for TLS (verified with the JVM's trust store, or the one in
 * {@link RedisOptions}; {@code verifyPeer=CA} or {@code NONE} relaxes it). {@code waitReplicas=N}
 * (and {@code waitTimeout}) makes every grant wait for N replicas. A server whose eviction policy
 * may delete the engine's keys is refused unless {@code acceptEviction=true} (see
 * {@link EvictionCheck}). Connecting and every command
 * are bounded by the client's connect timeout, or by the URI's {@code timeout} when given.
 * Lettuce reconnects by itself after a connection loss (to the new master after a failover);
 * while it is disconnected, commands fail at once instead of queueing.
 */
public final class RedisEngineProvider implements EngineProvider {

    /** For {@link java.util.ServiceLoader}. */
    public RedisEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return RedisTarget.SCHEMES;
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return RedisEngine.CAPABILITIES;
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return RedisTarget.PARAMETERS;
    }

    @Override
    public boolean plainFragment(String scheme) {
        return scheme.endsWith("-sentinel"); // the master's name
    }

    /** @return whether the URI carries a user-info (a password, or user and password) before its hosts */
    private static boolean hasUserInfo(String uri) {
        int start = uri.indexOf("//");
        int at = uri.indexOf('@');
        return start >= 0 && at > start;
    }

    @Override
    public LockEngine open(EngineContext context) {
        RedisOptions options =
                context.option(RedisOptions.class, Set.of(RedisOptions.class)).orElse(null);
        RedisTarget target = RedisTarget.parse(context.uri(), options);
        String shown = target.shown();
        if (!target.tls()
                && (hasUserInfo(context.uri())
                        || options != null && options.password().isPresent())) {
            java.util.List<String> hosts = new java.util.ArrayList<>();
            for (RedisURI uri : target.uris()) {
                if (uri.getHost() != null) {
                    hosts.add(uri.getHost());
                }
                uri.getSentinels().forEach(sentinel -> hosts.add(sentinel.getHost()));
            }
            Redaction.warnIfCredentialsInPlaintext("redis", context.uri(), hosts);
        }
        Duration commandTimeout = target.commandTimeout().orElse(context.connectTimeout());
        for (RedisURI uri : target.uris()) {
            uri.setTimeout(commandTimeout);
        }
        SocketOptions socket = SocketOptions.builder()
                .connectTimeout(context.connectTimeout())
                .keepAlive(true)
                .build();
        SslOptions ssl = sslOptions(options);
        if (target.kind() == RedisTarget.Kind.CLUSTER) {
            return openCluster(target, context.connectTimeout(), commandTimeout, socket, ssl);
        }
        RedisURI redisUri = target.uris().get(0);
        RedisClient client = RedisClient.create(SharedResources.INSTANCE, redisUri);
        client.setOptions(ClientOptions.builder()
                .socketOptions(socket)
                .sslOptions(ssl)
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        try {
            StatefulRedisConnection<String, String> connection = connect(
                    () -> client.connectAsync(StringCodec.UTF8, redisUri).toCompletableFuture(),
                    context.connectTimeout(),
                    shown);
            RedisLink link = new RedisLink.Single(client, connection, commandTimeout);
            ping(link, commandTimeout, shown);
            EvictionCheck eviction = checkEviction(link, target, commandTimeout);
            LockWaiters waiters = LockWaiters.ofOneServer(() -> connect(
                    () -> client.connectPubSubAsync(StringCodec.UTF8, redisUri).toCompletableFuture(),
                    context.connectTimeout(),
                    shown));
            return new RedisEngine(
                    shown, link, commandTimeout, waiters, target.waitReplicas(), target.waitTimeout(), eviction);
        } catch (RuntimeException e) {
            client.shutdownAsync(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    private static LockEngine openCluster(
            RedisTarget target,
            Duration connectTimeout,
            Duration commandTimeout,
            SocketOptions socket,
            SslOptions ssl) {
        String shown = target.shown();
        RedisClusterClient client = RedisClusterClient.create(SharedResources.INSTANCE, target.uris());
        client.setOptions(ClusterClientOptions.builder()
                .socketOptions(socket)
                .sslOptions(ssl)
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                // a failover is noticed by the adaptive triggers (MOVED, reconnects failing; all of them
                // are on by default), at most one refresh a second; the periodic refresh catches what they miss
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                        .enablePeriodicRefresh(Duration.ofSeconds(15))
                        .build())
                .build());
        try {
            StatefulRedisClusterConnection<String, String> connection = connect(
                    () -> client.refreshPartitionsAsync()
                            .toCompletableFuture()
                            .thenCompose(loaded -> client.connectAsync(StringCodec.UTF8)),
                    connectTimeout,
                    shown);
            RedisLink.Cluster link = new RedisLink.Cluster(client, connection, commandTimeout);
            link.connectNodes(connectTimeout);
            ping(link, commandTimeout, shown);
            EvictionCheck eviction = checkEviction(link, target, commandTimeout);
            LockWaiters waiters = LockWaiters.ofOneServer(
                    () -> connect(() -> client.connectPubSubAsync(StringCodec.UTF8), connectTimeout, shown));
            return new RedisEngine(
                    shown, link, commandTimeout, waiters, target.waitReplicas(), target.waitTimeout(), eviction);
        } catch (RuntimeException e) {
            client.shutdownAsync(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * Sends PING until it is answered: a connection the server closed just after the handshake is reconnected by
     * the client, and a PING refused meanwhile as not connected is sent again, every 20 ms until the command
     * timeout runs out.
     */
    private static void ping(RedisLink link, Duration commandTimeout, String shown) {
        long deadline = System.nanoTime() + commandTimeout.toNanos();
        while (true) {
            try {
                Replies.await(link.commands().ping(), commandTimeout, shown, "answer PING");
                return;
            } catch (EngineUnavailableException e) {
                if (!notConnected(e) || System.nanoTime() - deadline > 0) {
                    link.close();
                    throw credentialsProblem(e.getCause(), shown).orElse(e);
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
    }

    /** @return whether the client refused a command because its connection is down, being reconnected */
    private static boolean notConnected(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().startsWith("Currently not connected")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reads the eviction policy of every server that stores keys and refuses the engine when one
     * may evict them and that was not accepted.
     *
     * @throws UnsafeEngineException (after closing the link) if a server may evict keys
     */
    private static EvictionCheck checkEviction(RedisLink link, RedisTarget target, Duration commandTimeout) {
        EvictionCheck eviction = new EvictionCheck("redis engine " + target.shown(), target.acceptEviction());
        try {
            eviction.atOpen(link.evictionPolicies(commandTimeout));
        } catch (UnsafeEngineException e) {
            link.close();
            throw e;
        }
        return eviction;
    }

    private static SslOptions sslOptions(RedisOptions options) {
        SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
        if (options != null) {
            options.trustStore()
                    .ifPresent(store -> ssl.truststore(store.toFile(), passwordText(options.trustStorePassword())));
            options.keyStore().ifPresent(store -> ssl.keystore(store.toFile(), options.keyStorePassword()));
        }
        return ssl.build();
    }

    private static String passwordText(char[] password) {
        return password == null ? "" : new String(password);
    }

    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final int MASKED_ATTEMPTS = 5;

    /**
     * Connects, within {@code timeout} in all. When the server rejects the handshake at once (a
     * wrong password), Lettuce may find its handshake handler already gone from the pipeline and
     * report "RedisHandshakeHandler not registered", or see the channel close before the server's
     * answer is read and report "Connection closed prematurely"; such an attempt is made again, at
     * most {@value #MASKED_ATTEMPTS} times within the same deadline, so the real cause can be shown.
     */
    static <C> C connect(Supplier<CompletableFuture<C>> attempt, Duration timeout, String shown) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        for (int attempts = 1; ; attempts++) {
            CompletableFuture<C> pending = attempt.get();
            try {
                return Replies.await(
                        pending, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())), shown, "connect");
            } catch (EngineUnavailableException e) {
                pending.thenAccept(late -> {
                    if (late instanceof StatefulConnection<?, ?> connection) {
                        connection.closeAsync();
                    }
                });
                Throwable cause = e.getCause();
                if (handshakeMasked(cause)
                        && attempts < MASKED_ATTEMPTS
                        && System.nanoTime() + RETRY_PAUSE_NANOS - deadline < 0) {
                    LockSupport.parkNanos(RETRY_PAUSE_NANOS); // no connect storm if the failure persists
                    continue;
                }
                String waited = cause instanceof TimeoutException
                        ? "no answer within the connect timeout of " + Durations.format(timeout)
                        : rootMessage(cause) + " (after "
                                + Durations.format(Duration.ofNanos(System.nanoTime() - start))
                                + " of the connect timeout of " + Durations.format(timeout) + ")";
                throw credentialsProblem(cause, shown)
                        .orElseGet(() -> new EngineUnavailableException(
                                "could not connect to redis engine " + shown + ": " + waited
                                        + "; check that the server runs and that the URI's host and port are right",
                                cause));
            }
        }
    }

    private static boolean handshakeMasked(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException && "RedisHandshakeHandler not registered".equals(t.getMessage())
                    || t instanceof RedisConnectionException
                            && "Connection closed prematurely".equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    static Optional<EngineUnavailableException> credentialsProblem(Throwable failure, String shown) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException && t.getMessage() != null) {
                String message = t.getMessage();
                if (message.startsWith("WRONGPASS")
                        || message.contains("invalid password")
                        || message.contains("invalid username-password")) {
                    return Optional.of(new EngineUnavailableException(
                            "redis engine " + shown + " refused the user or password of the URI (" + message
                                    + "); check them",
                            failure));
                }
                if (message.startsWith("NOAUTH") || message.contains("without any password configured")) {
                    return Optional.of(new EngineUnavailableException(
                            "redis engine " + shown
                                    + " did not accept the authentication of the URI (" + message
                                    + "); give the password as redis://:PASSWORD@host:port or redis://USER:PASSWORD@host:port",
                            failure));
                }
            }
        }
        return Optional.empty();
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root != null && root.getCause() != null) {
            root = root.getCause();
        }
        return root == null ? "no answer" : String.valueOf(root.getMessage());
    }

    /**
     * One set of Lettuce threads (Netty event loops, timers) for every engine of the JVM, created on
     * first use and kept for the JVM's life, so opening and closing engines is cheap. Reconnection
     * after a lost connection is retried quickly (at most a second apart), since locks wait on it.
     */
    static final class SharedResources {
        static final ClientResources INSTANCE = create();

        private SharedResources() {}

        private static ClientResources create() {
            ClientResources resources = DefaultClientResources.builder()
                    .reconnectDelay(
                            Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                    .build();
            // each client releases its event loops when it shuts down, and the last release stops
            // them; this reference keeps them, so engines come and go without restarting threads
            // (and timers of a closed client never fire on a stopped loop)
            resources.eventLoopGroupProvider().allocate(Transports.eventLoopGroupClass());
            return resources;
        }
    }
}
