package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.internal.Checks;
import io.cerberus.internal.Uris;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.Transports;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Serves {@code redis://[user:password@]host[:port][/database][?timeout=5s]} and the same with
 * {@code rediss://} (TLS, verified with the JVM's trust store; {@code verifyPeer=CA} or
 * {@code NONE} relaxes it). Connecting and every command are bounded by the client's connect
 * timeout, or by the URI's {@code timeout} when given. Lettuce reconnects by itself after a
 * connection loss; while it is disconnected, commands fail at once instead of queueing.
 */
public final class RedisEngineProvider implements EngineProvider {
    private static final Set<String> QUERY_PARAMETERS = new TreeSet<>(Set.of("timeout", "database", "db", "clientName", "verifyPeer"));

    /** For {@link java.util.ServiceLoader}. */
    public RedisEngineProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return RedisEngine.CAPABILITIES;
    }

    @Override
    public LockEngine open(EngineContext context) {
        String shown = Uris.redact(context.uri());
        RedisURI redisUri = parse(context.uri(), shown);
        Duration commandTimeout = hasParameter(context.uri(), "timeout") ? redisUri.getTimeout() : context.connectTimeout();
        if (commandTimeout.isZero() || commandTimeout.isNegative()) {
            throw new IllegalArgumentException("the timeout of redis URI " + shown + " must be positive");
        }
        redisUri.setTimeout(commandTimeout);
        RedisClient client = RedisClient.create(SharedResources.INSTANCE, redisUri);
        client.setOptions(ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(context.connectTimeout()).keepAlive(true).build())
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        try {
            StatefulRedisConnection<String, String> connection = connect(
                    () -> client.connectAsync(StringCodec.UTF8, redisUri).toCompletableFuture(), context.connectTimeout(), shown);
            try {
                Replies.await(connection.async().ping(), commandTimeout, shown, "answer PING");
            } catch (EngineUnavailableException e) {
                connection.close();
                throw credentialsProblem(e.getCause(), shown).orElse(e);
            }
            LockWaiters waiters = new LockWaiters(() -> connect(
                    () -> client.connectPubSubAsync(StringCodec.UTF8, redisUri).toCompletableFuture(), context.connectTimeout(), shown));
            return new RedisEngine(shown, client, connection, commandTimeout, waiters);
        } catch (RuntimeException e) {
            client.shutdownAsync(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /**
     * Connects, within {@code timeout} in all. When the server rejects the handshake at once (a
     * wrong password), Lettuce may find its handshake handler already gone from the pipeline and
     * report "RedisHandshakeHandler not registered" instead of the server's answer; such an
     * attempt is made again, within the same deadline, so the real cause can be shown.
     */
    static <C> C connect(Supplier<CompletableFuture<C>> attempt, Duration timeout, String shown) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (true) {
            CompletableFuture<C> pending = attempt.get();
            try {
                return Replies.await(pending, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())), shown, "connect");
            } catch (EngineUnavailableException e) {
                pending.thenAccept(late -> {
                    if (late instanceof StatefulRedisConnection<?, ?> connection) {
                        connection.closeAsync();
                    } else if (late instanceof StatefulRedisPubSubConnection<?, ?> connection) {
                        connection.closeAsync();
                    }
                });
                Throwable cause = e.getCause();
                if (handshakeMasked(cause) && System.nanoTime() + RETRY_PAUSE_NANOS - deadline < 0) {
                    LockSupport.parkNanos(RETRY_PAUSE_NANOS); // no connect storm if the failure persists
                    continue;
                }
                String waited = cause instanceof TimeoutException ? "no answer within the connect timeout of " + Checks.format(timeout)
                        : rootMessage(cause) + " (after " + Checks.format(Duration.ofNanos(System.nanoTime() - start))
                                + " of the connect timeout of " + Checks.format(timeout) + ")";
                throw credentialsProblem(cause, shown).orElseGet(() -> new EngineUnavailableException("could not connect to redis engine "
                        + shown + ": " + waited + "; check that the server runs and that the URI's host and port are right", cause));
            }
        }
    }

    private static boolean handshakeMasked(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException && "RedisHandshakeHandler not registered".equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    static Optional<EngineUnavailableException> credentialsProblem(Throwable failure, String shown) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException && t.getMessage() != null) {
                String message = t.getMessage();
                if (message.startsWith("WRONGPASS") || message.contains("invalid password") || message.contains("invalid username-password")) {
                    return Optional.of(new EngineUnavailableException("redis engine " + shown
                            + " refused the user or password of the URI (" + message + "); check them", failure));
                }
                if (message.startsWith("NOAUTH") || message.contains("without any password configured")) {
                    return Optional.of(new EngineUnavailableException("redis engine " + shown
                            + " did not accept the authentication of the URI (" + message
                            + "); give the password as redis://:PASSWORD@host:port or redis://USER:PASSWORD@host:port", failure));
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

    private static RedisURI parse(String uri, String shown) {
        String scheme = uri.substring(0, Math.max(0, uri.indexOf(':'))).toLowerCase(Locale.ROOT);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new IllegalArgumentException("redis engine URIs start with redis:// or rediss://, was " + shown);
        }
        int query = uri.indexOf('?');
        if (query >= 0) {
            for (String parameter : uri.substring(query + 1).split("&")) {
                String name = parameter.contains("=") ? parameter.substring(0, parameter.indexOf('=')) : parameter;
                if (!QUERY_PARAMETERS.contains(name)) {
                    throw new IllegalArgumentException("unknown parameter '" + name + "' in redis URI " + shown
                            + "; known parameters: " + String.join(", ", QUERY_PARAMETERS));
                }
            }
        }
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("redis URI must look like redis://[user:password@]host[:port][/database][?timeout=10s]"
                    + " (rediss:// for TLS), was " + shown + ": " + Uris.redact(String.valueOf(e.getMessage())), e);
        }
    }

    private static boolean hasParameter(String uri, String name) {
        int query = uri.indexOf('?');
        if (query < 0) {
            return false;
        }
        for (String parameter : uri.substring(query + 1).split("&")) {
            if (parameter.equals(name) || parameter.startsWith(name + "=")) {
                return true;
            }
        }
        return false;
    }

    /**
     * One set of Lettuce threads (Netty event loops, timers) for every engine of the JVM, created on
     * first use and kept for the JVM's life, so opening and closing engines is cheap. Reconnection
     * after a lost connection is retried quickly (at most a second apart), since locks wait on it.
     */
    static final class SharedResources {
        static final ClientResources INSTANCE = create();

        private SharedResources() {
        }

        private static ClientResources create() {
            ClientResources resources = DefaultClientResources.builder()
                    .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                    .build();
            // each client releases its event loops when it shuts down, and the last release stops
            // them; this reference keeps them, so engines come and go without restarting threads
            // (and timers of a closed client never fire on a stopped loop)
            resources.eventLoopGroupProvider().allocate(Transports.eventLoopGroupClass());
            return resources;
        }
    }
}
