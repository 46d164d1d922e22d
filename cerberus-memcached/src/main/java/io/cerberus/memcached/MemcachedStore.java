package io.cerberus.memcached;

import io.cerberus.Capability;
import io.cerberus.CerberusException;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.support.KeyValueStore;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import net.rubyeye.xmemcached.GetsResponse;
import net.rubyeye.xmemcached.HashAlgorithm;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.command.BinaryCommandFactory;
import net.rubyeye.xmemcached.exception.MemcachedException;
import net.rubyeye.xmemcached.impl.ArrayMemcachedSessionLocator;
import net.rubyeye.xmemcached.transcoders.StringTranscoder;

/**
 * The simple tier's store on memcached, through xmemcached's binary protocol.
 *
 * <p><b>Owner checks.</b> Acquire is {@code add} (stores only if the key is absent). Renew and
 * release read the entry with {@code gets}, which returns its CAS value (changed by every write);
 * the {@code cas} or delete-with-CAS that follows lands only if nothing wrote the entry since, so an
 * entry that expired and was taken by another owner meanwhile is left alone. Delete-with-CAS exists
 * only in the binary protocol; a server run with CAS off ({@code -C}) is refused.
 *
 * <p><b>Expiry.</b> memcached's clock ticks once a second, so exptime N can end just over N - 1
 * seconds after the set (memcached issue #307): {@link #expiryFor} asks for the lease's seconds
 * rounded up, plus one. An exptime over 30 days is a Unix time on the server's clock: longer leases
 * are refused, and one of 30 days gets no extra second.
 *
 * <p><b>Keys.</b> A key not of at most 250 printable ASCII bytes without spaces, or starting with
 * {@link #HASHED_KEY_PREFIX}, is stored as that prefix and the base64url SHA-256 of its UTF-8 bytes.
 *
 * <p><b>Several servers.</b> A key lives on server CRC32(key) modulo the number of servers, in URI
 * order (no address or DNS name enters the choice), so clients that list the same servers agree.
 * While a key's server is down its calls fail (failure mode) instead of moving to another server,
 * where a second holder could take a lock the first still holds.
 *
 * <p><b>Calls</b> run on a worker thread, awaited through interrupts (the flag kept): xmemcached
 * would give up when interrupted, not knowing whether the command took effect.
 */
final class MemcachedStore implements KeyValueStore {
    private static final System.Logger LOG = System.getLogger(MemcachedStore.class.getName());
    /** The longest exptime memcached reads as seconds from now; a larger one is a Unix time. */
    static final long MAX_RELATIVE_EXPIRY_SECONDS = 30L * 24 * 60 * 60;
    /** The longest memcached key. */
    static final int MAX_KEY_BYTES = 250;
    /** The prefix of the keys that stand for a key memcached cannot store as is. */
    static final String HASHED_KEY_PREFIX = "cerberus-sha256:";
    /** How often the client tries again to connect to a server it lost. */
    private static final long RECONNECT_MILLIS = 1000;

    private static final AtomicInteger WORKERS = new AtomicInteger();

    private final String uri;
    private final Duration timeout;
    private final ExecutorService calls;
    private final MemcachedClient client;
    /** The longest value every server keeps: its largest item less room for the key and the item's header. */
    private int maxValueLength = Integer.MAX_VALUE / 2;
    /** The servers as the URI names them, and the same resolved, in one order: set at open, for messages. */
    private volatile List<InetSocketAddress> given = List.of();

    private volatile List<InetSocketAddress> resolved = List.of();

    private MemcachedStore(String uri, Duration timeout, ExecutorService calls, MemcachedClient client) {
        this.uri = uri;
        this.timeout = timeout;
        this.calls = calls;
        this.client = client;
    }

    /**
     * Connects to every server and reads its settings.
     *
     * @param uri the engine URI (it holds no password: {@link MemcachedTarget} refuses user-info)
     * @param target the parsed URI
     * @param connectTimeout the longest opening may take
     * @return the open store
     * @throws EngineUnavailableException if a server cannot be resolved, reached or read in time,
     *     or runs with CAS off
     */
    static MemcachedStore open(String uri, MemcachedTarget target, Duration connectTimeout) {
        List<InetSocketAddress> servers = new ArrayList<>();
        for (InetSocketAddress server : target.servers()) {
            InetSocketAddress resolved = new InetSocketAddress(server.getHostString(), server.getPort());
            if (resolved.isUnresolved()) {
                throw new EngineUnavailableException(
                        "memcached engine " + uri + ": cannot resolve host " + server.getHostString(), null);
            }
            if (servers.contains(resolved)) {
                throw new IllegalArgumentException("memcached engine " + uri + " names server "
                        + resolved.getAddress().getHostAddress() + ":" + resolved.getPort()
                        + " twice (under two names); list each server once");
            }
            servers.add(resolved);
        }
        probe(uri, target.servers(), servers, connectTimeout);
        XMemcachedClientBuilder builder = new XMemcachedClientBuilder(servers);
        builder.setCommandFactory(new BinaryCommandFactory());
        builder.setSessionLocator(new ArrayMemcachedSessionLocator(HashAlgorithm.CRC32_HASH));
        builder.setFailureMode(true);
        builder.setConnectTimeout(connectTimeout.toMillis());
        builder.setHealSessionInterval(RECONNECT_MILLIS);
        builder.setTranscoder(new StringTranscoder(StandardCharsets.UTF_8.name()));
        ExecutorService calls = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "cerberus-memcached-" + WORKERS.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        // xmemcached connects to one server after another: bound the whole, not each
        CompletableFuture<MemcachedClient> built = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return builder.build();
                    } catch (IOException e) {
                        throw new EngineUnavailableException(
                                "memcached engine " + uri + " could not start its client", e);
                    }
                },
                calls);
        MemcachedStore store;
        try {
            store = new MemcachedStore(
                    uri,
                    target.timeout().orElse(connectTimeout),
                    calls,
                    await(built, connectTimeout, connectTimeout, uri, "connect to " + shown(target.servers())));
        } catch (RuntimeException e) {
            built.thenAccept(MemcachedStore::shutDown);
            calls.shutdown();
            throw e;
        }
        try {
            store.checkServers(target.servers(), servers);
            return store;
        } catch (RuntimeException e) {
            store.close(Duration.ZERO); // xmemcached waits up to 5 s for a silent server to close its connection
            throw e;
        }
    }

    /** Connects to each server once first: one that is down fails opening at once, without xmemcached's error logs. */
    private static void probe(
            String uri, List<InetSocketAddress> given, List<InetSocketAddress> servers, Duration connectTimeout) {
        long deadline = System.nanoTime() + connectTimeout.toNanos();
        for (int i = 0; i < servers.size(); i++) {
            try (Socket socket = new Socket()) {
                socket.connect(
                        servers.get(i), (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (IOException e) {
                throw new EngineUnavailableException(
                        "memcached engine " + uri + " could not connect to " + shown(List.of(given.get(i)))
                                + " within " + connectTimeout.toMillis() + "ms (" + e.getMessage()
                                + "); check that memcached runs there and"
                                + " listens on that address (-l, -p)",
                        e);
            }
        }
    }

    /**
     * Refuses servers that run with CAS off; warns once if any may evict lock entries. A server
     * that went down since the probe does not answer here, which fails opening too.
     *
     * @param given the servers as the URI names them, for messages
     * @param resolved the same servers, resolved, as the client knows them
     */
    private void checkServers(List<InetSocketAddress> given, List<InetSocketAddress> resolved) {
        this.given = given;
        this.resolved = resolved;
        Optional<String> evicting = evictionWarning(true);
        evicting.ifPresent(warning -> LOG.log(Level.WARNING, warning));
    }

    /**
     * Reads the servers' settings (one {@code stats settings} each).
     *
     * @param atOpen whether the engine is opening: then the item size is learnt, and a server with
     *     CAS off is refused
     * @return the warning about servers that may evict entries, if any does
     */
    private Optional<String> evictionWarning(boolean atOpen) {
        Map<InetSocketAddress, Map<String, String>> settings = call(
                "read the servers' settings (stats settings)",
                () -> client.getStatsByItem("settings", timeout.toMillis()));
        List<InetSocketAddress> evicting = new ArrayList<>();
        settings.forEach((server, values) -> {
            InetSocketAddress named = resolved.contains(server) ? given.get(resolved.indexOf(server)) : server;
            if (atOpen) {
                maxValueLength = Math.min(
                        maxValueLength, Integer.parseInt(values.getOrDefault("item_size_max", "1048576")) - 512);
                if ("no".equals(values.get("cas_enabled"))) {
                    throw new EngineUnavailableException(
                            "memcached engine " + uri + ": server " + shown(List.of(named)) + " runs with CAS"
                                    + " off (-C); owner-checked renewal and release need it: run memcached without -C",
                            null);
                }
            }
            if ("on".equals(values.get("evictions"))) {
                evicting.add(named);
            }
        });
        return evicting.isEmpty()
                ? Optional.empty()
                : Optional.of("memcached engine " + uri + ": " + shown(evicting)
                        + " may evict entries when memory runs out (stats settings: evictions on); an evicted lock entry frees its lock before"
                        + " its lease ends, and another client can take it. Run memcached with -M (no evictions), or give the locks a memcached"
                        + " of their own");
    }

    /** @return the eviction warning, read again from every server */
    @Override
    public List<String> healthWarnings() {
        return evictionWarning(false).map(List::of).orElse(List.of());
    }

    private static String shown(List<InetSocketAddress> servers) {
        return String.join(
                ", ",
                servers.stream()
                        .map(server -> server.getHostString() + ":" + server.getPort())
                        .toList());
    }

    @Override
    public String describe() {
        return uri;
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public Duration expiryFor(Duration lease) {
        // the lease's whole seconds, rounded up, plus the tick memcached's clock may be behind (see the class
        // comment); memcached takes no longer relative expiry than 30 days, so a lease of 30 days gets no extra tick
        long seconds = lease.getSeconds() + (lease.getNano() > 0 ? 1 : 0);
        if (seconds > MAX_RELATIVE_EXPIRY_SECONDS) {
            throw new IllegalArgumentException(
                    "a lease on memcached must be at most 30 days (memcached reads a longer expiry as"
                            + " a date), was " + lease);
        }
        return Duration.ofSeconds(Math.min(seconds + 1, MAX_RELATIVE_EXPIRY_SECONDS));
    }

    @Override
    public Optional<Duration> longestExpiry() {
        return Optional.of(Duration.ofSeconds(MAX_RELATIVE_EXPIRY_SECONDS));
    }

    @Override
    public int maxValueLength() {
        return maxValueLength;
    }

    /** @return the exptime of an expiry from {@link #expiryFor}: whole seconds, rounded up; 0 (never) for {@link #FOREVER} */
    private static int exptime(Duration expiry) {
        if (expiry.equals(FOREVER)) {
            return 0;
        }
        long seconds = expiry.getSeconds() + (expiry.getNano() > 0 ? 1 : 0);
        if (seconds < 1 || seconds > MAX_RELATIVE_EXPIRY_SECONDS) {
            throw new IllegalArgumentException("a memcached expiry must be 1 s to 30 days, was " + expiry);
        }
        return (int) seconds;
    }

    @Override
    public boolean putIfAbsent(String key, String value, Duration expiry) {
        String stored = storeKey(key);
        return call("add " + stored, () -> client.add(stored, exptime(expiry), value, timeout.toMillis()));
    }

    @Override
    public boolean replaceIfEquals(String key, String expected, String value, Duration expiry) {
        String stored = storeKey(key);
        return call("replace " + stored, () -> {
            // a cas refused because the entry was written since the gets (by a renewal of the same value) is tried
            // again
            while (true) {
                GetsResponse<String> current = client.gets(stored, timeout.toMillis());
                if (current == null || !expected.equals(current.getValue())) {
                    return false;
                }
                if (client.cas(stored, exptime(expiry), value, timeout.toMillis(), casOf(current, stored))) {
                    return true;
                }
            }
        });
    }

    @Override
    public boolean deleteIfEquals(String key, String expected) {
        String stored = storeKey(key);
        return call("delete " + stored, () -> {
            while (true) {
                GetsResponse<String> current = client.gets(stored, timeout.toMillis());
                if (current == null || !expected.equals(current.getValue())) {
                    return false;
                }
                if (client.delete(stored, casOf(current, stored), timeout.toMillis())) {
                    return true;
                }
            }
        });
    }

    @Override
    public Optional<String> get(String key) {
        String stored = storeKey(key);
        return Optional.ofNullable(call("get " + stored, () -> client.<String>get(stored, timeout.toMillis())));
    }

    /** A CAS value of 0 would make {@code cas} a plain set and the delete unconditional: never send one. */
    private long casOf(GetsResponse<String> current, String key) {
        if (current.getCas() == 0) {
            throw new EngineUnavailableException(
                    "memcached engine " + uri + " gave no CAS value for " + key
                            + " (is the server running with -C?); owner-checked renewal and release need it",
                    null);
        }
        return current.getCas();
    }

    @Override
    public Optional<String> whyNot(Capability capability) {
        return Optional.of(
                capability == Capability.FENCING
                        ? "memcached drops counters when it evicts them or restarts, and a counter that starts again hands out tokens"
                                + " that earlier holders already had"
                        : "the memcached engine is built on plain key-value operations (add, CAS, delete): exclusive locks only");
    }

    /**
     * @param key a key of the simple tier
     * @return the key itself if memcached can store it as is, else the prefix and the base64url SHA-256 of its UTF-8 bytes
     */
    static String storeKey(String key) {
        if (key.length() <= MAX_KEY_BYTES
                && !key.startsWith(HASHED_KEY_PREFIX)
                && key.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
            return key;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HASHED_KEY_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** One command (or two) of xmemcached, on its own thread. */
    private interface Command<T> {
        T run() throws TimeoutException, InterruptedException, MemcachedException;
    }

    private <T> T call(String what, Command<T> command) {
        // xmemcached gives up at the timeout itself; the longer wait here only guards against a command that never
        // returns
        return await(calls.submit(command::run), timeout.multipliedBy(2).plusSeconds(1), timeout, uri, what);
    }

    /**
     * Waits for an answer through interrupts (the flag is kept) and turns failures to reach
     * memcached into {@link EngineUnavailableException}.
     */
    private static <T> T await(Future<T> answer, Duration max, Duration timeout, String uri, String what) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + max.toNanos();
        try {
            while (true) {
                try {
                    return answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    answer.cancel(true);
                    throw unavailable(uri, what, timeout, e);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof CerberusException || e.getCause() instanceof IllegalArgumentException) {
                        throw (RuntimeException) e.getCause();
                    }
                    throw unavailable(uri, what, timeout, e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static EngineUnavailableException unavailable(String uri, String what, Duration timeout, Throwable cause) {
        String reason = cause instanceof TimeoutException
                ? "no answer within " + timeout.toMillis() + "ms"
                : String.valueOf(cause.getMessage());
        return new EngineUnavailableException(
                "memcached engine " + uri + " failed to " + what + " (" + reason
                        + "); check that memcached runs there and is not overloaded",
                cause);
    }

    private static void shutDown(MemcachedClient client) {
        try {
            client.shutdown();
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "closing the memcached client failed", e);
        }
    }

    @Override
    public void close() {
        close(timeout);
    }

    /** Closes the client, waiting for it at most {@code wait}; the rest happens in the background. */
    private void close(Duration wait) {
        if (calls.isShutdown()) {
            return;
        }
        Future<?> closing = calls.submit(() -> shutDown(client));
        calls.shutdown();
        try {
            closing.get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.log(Level.DEBUG, "the memcached client of " + uri + " goes on closing in the background", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
