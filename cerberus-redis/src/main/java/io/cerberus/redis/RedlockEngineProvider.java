package io.cerberus.redis;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.Durations;
import io.cerberus.spi.support.EngineUri;
import io.cerberus.spi.support.Redaction;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Serves {@code redlock://[user:password@]h1:p1,h2:p2,h3:p3[?timeout=5s&nodeTimeout=50ms&drift=0.01]}:
 * the Redlock algorithm on N independent Redis masters (at least 3; an odd number, since an even
 * one tolerates no more failures than one node fewer). Opening succeeds when a majority of the
 * nodes connects within the connect timeout; the others are connected in the background when the
 * engine next needs them. See {@link RedlockEngine} for the algorithm and {@code docs/REDLOCK.md}
 * for what it guarantees. {@link RedisOptions} may give the user and password of every node
 * (replacing the URI's); their TLS stores and replica waits do not apply here. A node whose
 * eviction policy may delete keys is refused unless {@code acceptEviction=true}, as on one server.
 */
public final class RedlockEngineProvider implements EngineProvider {
    private static final System.Logger LOG = System.getLogger(RedlockEngineProvider.class.getName());
    private static final Set<String> QUERY_PARAMETERS =
            new TreeSet<>(Set.of("timeout", "nodeTimeout", "drift", "acceptEviction"));
    private static final String SHAPE =
            "redlock://[user:password@]host1:port1,host2:port2,host3:port3[?timeout=5s&nodeTimeout=50ms&drift=0.01]";
    private static final AtomicInteger ENGINES = new AtomicInteger();
    /** The smallest number of nodes: with fewer, one failure leaves no majority. */
    static final int MIN_NODES = 3;

    static final int DEFAULT_PORT = 6379;
    /** How long opening waits for the other nodes once a majority is connected. */
    static final Duration OPEN_GRACE = Duration.ofMillis(100);

    /** For {@link java.util.ServiceLoader}. */
    public RedlockEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("redlock");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return RedlockEngine.CAPABILITIES;
    }

    @Override
    public Set<String> plainParameters(String scheme) {
        return QUERY_PARAMETERS;
    }

    /** A parsed redlock URI. */
    record Settings(
            List<String> addresses,
            List<RedisURI> nodes,
            Optional<Duration> timeout,
            Optional<Duration> nodeTimeout,
            double driftFactor,
            boolean acceptEviction) {}

    @Override
    public LockEngine open(EngineContext context) {
        String shown = Redaction.redact(context.uri());
        Settings settings = parse(context.uri(), shown);
        RedisOptions options =
                context.option(RedisOptions.class, Set.of(RedisOptions.class)).orElse(null);
        if (options != null
                && (options.trustStore().isPresent() || options.keyStore().isPresent())) {
            throw new IllegalArgumentException("redlock engine " + shown
                    + " connects without TLS; RedisOptions trust and key" + " stores apply to rediss:// URIs only");
        }
        if (options != null && options.waitReplicas() > 0) {
            throw new IllegalArgumentException("redlock engine " + shown + " counts independent masters, not replicas;"
                    + " RedisOptions.waitForReplicas applies to redis://, Sentinel and Cluster URIs only");
        }
        Duration commandTimeout = settings.timeout().orElse(context.connectTimeout());
        int count = settings.nodes().size();
        if (count % 2 == 0) {
            LOG.log(
                    Level.INFO,
                    () -> "redlock engine " + shown + " has an even number of nodes (" + count + "): it needs "
                            + (count / 2 + 1) + " of them and so survives no more failures than " + (count - 1)
                            + " nodes would");
        }
        String name = "cerberus-redlock-connect-" + ENGINES.incrementAndGet();
        AtomicInteger threads = new AtomicInteger();
        // one thread per node at most, and none while no node is being connected
        ThreadPoolExecutor connector =
                new ThreadPoolExecutor(count, count, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, name + "-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        connector.allowCoreThreadTimeOut(true);
        List<RedlockNode> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                RedisURI uri = settings.nodes().get(i);
                uri.setTimeout(commandTimeout);
                if (options != null) {
                    RedisTarget.apply(options, uri);
                }
                RedisClient client = RedisClient.create(RedisEngineProvider.SharedResources.INSTANCE, uri);
                client.setOptions(ClientOptions.builder()
                        .socketOptions(SocketOptions.builder()
                                .connectTimeout(context.connectTimeout())
                                .keepAlive(true)
                                .build())
                        .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .build());
                nodes.add(
                        new RedlockNode(settings.addresses().get(i), client, uri, context.connectTimeout(), connector));
            }
            awaitMajority(nodes, context.connectTimeout(), shown);
            EvictionCheck eviction = new EvictionCheck(
                    "redlock engine " + shown, RedisOptions.acceptsEviction(options, settings.acceptEviction()));
            // each node holds a copy of every lock: a node that evicts is refused like a single server
            eviction.atOpen(RedlockNodes.evictionPolicies(nodes, commandTimeout));
            return new RedlockEngine(
                    shown, nodes, commandTimeout, settings.nodeTimeout(), settings.driftFactor(), connector, eviction);
        } catch (RuntimeException e) {
            nodes.forEach(RedlockNode::close);
            connector.shutdownNow();
            throw e;
        }
    }

    /** Connects every node at once and returns when a majority is connected; throws when a majority cannot be. */
    private static void awaitMajority(List<RedlockNode> nodes, Duration connectTimeout, String shown) {
        int quorum = nodes.size() / 2 + 1;
        List<CompletableFuture<StatefulRedisConnection<String, String>>> attempts = new ArrayList<>();
        for (RedlockNode node : nodes) {
            attempts.add(node.connect());
        }
        long deadline = System.nanoTime() + connectTimeout.toNanos();
        CompletableFuture<Void> majority = new CompletableFuture<>();
        AtomicInteger connected = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        for (CompletableFuture<StatefulRedisConnection<String, String>> attempt : attempts) {
            attempt.whenComplete((connection, failure) -> {
                if (failure == null
                        ? connected.incrementAndGet() >= quorum
                        : failed.incrementAndGet() > nodes.size() - quorum) {
                    majority.complete(null);
                }
            });
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    majority.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException | ExecutionException e) {
                    break;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (connected.get() >= quorum) {
            // give the other nodes a moment, so a healthy set of nodes starts complete; a node
            // that is still connecting after it is connected in the background
            long grace = Math.min(deadline - System.nanoTime(), OPEN_GRACE.toNanos());
            try {
                CompletableFuture.allOf(attempts.toArray(new CompletableFuture<?>[0]))
                        .get(Math.max(0, grace), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // the nodes that are down are connected in the background when needed
            }
            return;
        }
        StringJoiner down = new StringJoiner(", ");
        StringJoiner connecting =
                new StringJoiner(", ", "; still connecting when a majority had failed: ", "").setEmptyValue("");
        boolean timedOut = System.nanoTime() - deadline >= 0;
        for (int i = 0; i < nodes.size(); i++) {
            CompletableFuture<StatefulRedisConnection<String, String>> attempt = attempts.get(i);
            if (!attempt.isDone() && timedOut) {
                down.add(nodes.get(i).address() + " (no answer within the connect timeout of "
                        + Durations.format(connectTimeout) + ")");
            } else if (!attempt.isDone()) {
                connecting.add(nodes.get(i).address());
            } else if (attempt.isCompletedExceptionally()) {
                Throwable failure = attempt.handle((connection, error) -> error).join();
                Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
                Optional<EngineUnavailableException> credentials = RedisEngineProvider.credentialsProblem(cause, shown);
                if (credentials.isPresent()) {
                    throw credentials.get();
                }
                down.add(nodes.get(i).address() + " (" + rootMessage(cause) + ")");
            }
        }
        throw new EngineUnavailableException(
                "could not connect to redlock engine " + shown + ": " + connected.get() + " of "
                        + nodes.size() + " nodes connected, a majority needs " + quorum + "; nodes down: " + down
                        + connecting
                        + "; check that the servers run and that the URI's hosts and ports are right",
                null);
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return String.valueOf(root.getMessage());
    }

    /**
     * @param uri the URI as given
     * @param shown the URI without its password
     * @return the parsed URI
     * @throws IllegalArgumentException naming the rule broken
     */
    static Settings parse(String uri, String shown) {
        EngineUri parts = EngineUri.parse(uri, "redlock", Set.of("redlock"), QUERY_PARAMETERS);
        String user = parts.user().orElse(null);
        String password = parts.password().orElse(null);
        if (!parts.path().isEmpty()) {
            throw new IllegalArgumentException(
                    "a redlock URI has no path (each node uses database 0): " + SHAPE + ", was " + shown);
        }
        List<String> addresses = new ArrayList<>();
        List<RedisURI> nodes = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String address : parts.hostsWithPorts(DEFAULT_PORT)) {
            String host = address.substring(0, address.lastIndexOf(':'));
            int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
            if (!seen.add(address.toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("redlock node " + address + " is listed twice in " + shown
                        + "; the nodes must be distinct, independent masters");
            }
            RedisURI.Builder builder = RedisURI.builder()
                    .withHost(host.startsWith("[") ? host.substring(1, host.length() - 1) : host)
                    .withPort(port);
            if (password != null) {
                if (user == null || user.isEmpty()) {
                    builder.withPassword(password.toCharArray());
                } else {
                    builder.withAuthentication(user, password);
                }
            }
            addresses.add(address);
            nodes.add(builder.build());
        }
        if (nodes.size() < MIN_NODES) {
            throw new IllegalArgumentException(
                    "a redlock URI needs at least " + MIN_NODES + " nodes (independent Redis masters;"
                            + " an odd number such as 3 or 5), so that a majority survives a failed node; " + shown
                            + " has " + nodes.size());
        }
        Optional<Duration> timeout = parts.duration("timeout");
        Optional<Duration> nodeTimeout = parts.duration("nodeTimeout");
        double drift = RedlockEngine.DEFAULT_DRIFT_FACTOR;
        if (parts.parameter("drift").isPresent()) {
            try {
                drift = Double.parseDouble(parts.parameter("drift").get());
            } catch (NumberFormatException e) {
                drift = Double.NaN;
            }
            if (!(drift >= 0 && drift < 0.5)) {
                throw new IllegalArgumentException("drift of redlock URI " + shown
                        + " must be a fraction of the lease from 0 to" + " below 0.5, such as 0.01 (the default), was '"
                        + parts.parameter("drift").get() + "'");
            }
        }
        return new Settings(
                List.copyOf(addresses),
                List.copyOf(nodes),
                timeout,
                nodeTimeout,
                drift,
                parts.flag("acceptEviction").orElse(false));
    }
}
