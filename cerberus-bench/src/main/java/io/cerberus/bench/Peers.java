package io.cerberus.bench;

import io.cerberus.Cerberus;
import io.cerberus.CerberusBuilder;
import io.cerberus.DistributedLock;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/** The Redis peers, each connected to the same Redis server; Cerberus on any engine URI; the in-JVM floor. */
final class Peers {
    /** The name of the bare SET NX + SET peer, the baseline of the idempotency workloads. */
    static final String FLOOR_GUARD = "SET NX + SET (floor)";
    /** The peer the Redis lock tables are compared with. */
    static final String REDISSON = "Redisson RLock";

    static final String REDISSON_FENCED = "Redisson RFencedLock";
    /** How long an async waiter waits at most: far past any cell, so that a timeout is a failure of the peer. */
    static final Duration ASYNC_WAIT = Duration.ofMinutes(2);
    /** How often a Spring registry's lock refused as evicted from its cache is obtained afresh and tried again. */
    private static final int EVICTED_RETRIES = 10;

    private Peers() {}

    /** Cerberus on {@code redis://} (or any engine URI). */
    static Peer cerberus(String uri) {
        return cerberus(uri, CerberusBuilder.DEFAULT_LEASE);
    }

    /** Cerberus on any engine URI, locks taken with this lease (renewed every lease/3 while held). */
    static Peer cerberus(String uri, Duration lease) {
        return cerberus(uri, lease, "Cerberus");
    }

    /** Cerberus on any engine URI, named {@code label} in the tables. */
    static Peer cerberus(String uri, Duration lease, String label) {
        return cerberus(
                Cerberus.builder()
                        .engine(uri)
                        .namespace("bench")
                        .defaultLease(lease)
                        .build(),
                label,
                () -> {});
    }

    /**
     * @param cerberus the client, closed with the peer
     * @param label the peer's name in the tables
     * @param alsoOnClose what to close after the client
     * @return the client as a peer
     */
    static Peer cerberus(Cerberus cerberus, String label, Runnable alsoOnClose) {
        return new Peer() {
            @Override
            public String name() {
                return label;
            }

            @Override
            public Held lock(String name) {
                DistributedLock lock = cerberus.lock(name);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public CompletableFuture<AsyncHeld> lockAsync(String name, long waiter) {
                return cerberus.lock(name).acquireAsync(ASYNC_WAIT).thenApply(lease -> new AsyncHeld() {
                    @Override
                    public long fencingToken() {
                        return lease.fencingToken();
                    }

                    @Override
                    public CompletableFuture<?> unlockAsync() {
                        return lease.releaseAsync();
                    }
                });
            }

            @Override
            public boolean isLocked(String name) {
                return cerberus.lock(name).isLocked();
            }

            @Override
            public void close() {
                cerberus.close();
                alsoOnClose.run();
            }
        };
    }

    /**
     * Cerberus's idempotency guard on {@code redis://}: a "lock" is one whole guarded call (claim,
     * a no-op operation, complete; or a replay), "unlock" does nothing.
     */
    static Peer cerberusGuard(String uri) {
        Cerberus cerberus = Cerberus.builder().engine(uri).namespace("bench").build();
        IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults());
        return new Peer() {
            @Override
            public String name() {
                return "Cerberus IdempotencyGuard";
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                try {
                    guard.execute(IdempotencyKey.ofContent("bench", name), Duration.ofHours(1), () -> "ok");
                } catch (InterruptedException | RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return () -> {};
            }

            @Override
            public void close() {
                cerberus.close();
            }
        };
    }

    /**
     * The floor of a guard: {@code SET key NX PX} to claim, then {@code SET key result XX PX} to
     * complete (a duplicate gets the value from the failed claim's {@code GET}: {@code SET ... NX GET}).
     * No owner check, no fingerprint, no renewal: what a hand-written guard does, and less.
     */
    static Peer setNxFloor(String host, int port) {
        RedisClient client = RedisClient.create("redis://" + host + ":" + port);
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisCommands<String, String> commands = connection.sync();
        return new Peer() {
            @Override
            public String name() {
                return FLOOR_GUARD;
            }

            @Override
            public Held lock(String name) {
                String key = "bench-floor:" + name;
                String previous =
                        commands.setGet(key, "claimed", SetArgs.Builder.nx().px(30_000));
                if (previous == null) {
                    commands.set(key, "ok", SetArgs.Builder.xx().px(3_600_000));
                }
                return () -> {};
            }

            @Override
            public void close() {
                connection.close();
                client.shutdown();
            }
        };
    }

    /** Redisson's {@code RLock} (pub/sub waiting, watchdog renewal). */
    static Peer redisson(String host, int port) {
        return redisson(host, port, Duration.ofSeconds(30), false);
    }

    /**
     * Redisson's {@code RFencedLock}: an {@code RLock} that also increments a token per grant,
     * taken with {@code lockAndGetToken()} (Redisson's answer to fencing, as Cerberus's grants carry a token).
     */
    static Peer redissonFenced(String host, int port) {
        return redisson(host, port, Duration.ofSeconds(30), true);
    }

    /**
     * Redisson's {@code RLock}, or its {@code RFencedLock}, with this watchdog timeout: a held
     * lock's expiry, reset every timeout/3.
     */
    static Peer redisson(String host, int port, Duration watchdogTimeout, boolean fenced) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + host + ":" + port);
        config.setLockWatchdogTimeout(watchdogTimeout.toMillis());
        RedissonClient client = Redisson.create(config);
        return new Peer() {
            @Override
            public String name() {
                return fenced ? REDISSON_FENCED : REDISSON;
            }

            @Override
            public Held lock(String name) {
                if (fenced) {
                    RFencedLock lock = client.getFencedLock("bench-fenced:" + name);
                    Long token = lock.lockAndGetToken();
                    if (token == null) {
                        throw new IllegalStateException("RFencedLock granted " + name + " without a token");
                    }
                    return lock::unlock;
                }
                RLock lock = client.getLock("bench:" + name);
                lock.lock();
                return lock::unlock;
            }

            /** {@code RLock.lockAsync(threadId)}, released with {@code unlockAsync(threadId)}: the waiter is the thread id. */
            @Override
            public CompletableFuture<AsyncHeld> lockAsync(String name, long waiter) {
                if (fenced) {
                    return Peer.super.lockAsync(name, waiter);
                }
                RLock lock = client.getLock("bench:" + name);
                return lock.lockAsync(waiter).toCompletableFuture().thenApply(granted -> new AsyncHeld() {
                    @Override
                    public long fencingToken() {
                        return NO_TOKEN;
                    }

                    @Override
                    public CompletableFuture<?> unlockAsync() {
                        return lock.unlockAsync(waiter).toCompletableFuture();
                    }
                });
            }

            @Override
            public boolean isLocked(String name) {
                return fenced
                        ? client.getFencedLock("bench-fenced:" + name).isLocked()
                        : client.getLock("bench:" + name).isLocked();
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    /**
     * Locks {@code name} in a Spring Integration registry (Redis or JDBC): the registry's lock, held
     * by this thread. Spring Integration 7.1's {@code RedisLockRegistry} at times refuses a lock it
     * has just handed out when other threads obtain new names at the same time ("evicted from the
     * exhausted cache", with a cache far from full: its check reads the cache without the lock that
     * guards it); as its message says, a fresh lock is obtained and tried again.
     */
    static Peer.Held lockIn(LockRegistry<?> registry, String name) {
        return onFreshLock(registry, name, lock -> {
            lock.lock();
            return lock::unlock;
        });
    }

    /**
     * @return whether {@code name} is held elsewhere, by a try from this registry (its own client
     *     id): another registry's hold makes it fail; a success is undone
     */
    static boolean isLockedIn(LockRegistry<?> registry, String name) {
        return onFreshLock(registry, name, lock -> {
            if (lock.tryLock()) {
                lock.unlock();
                return false;
            }
            return true;
        });
    }

    /** Applies {@code use} to the registry's lock of {@code name}, on a freshly obtained one while it is refused as evicted. */
    private static <T> T onFreshLock(LockRegistry<?> registry, String name, Function<Lock, T> use) {
        for (int attempt = 1; ; attempt++) {
            Lock lock = registry.obtain(name);
            try {
                return use.apply(lock);
            } catch (RuntimeException e) {
                if (!evictedFromCache(e) || attempt == EVICTED_RETRIES) {
                    throw e;
                }
            }
        }
    }

    private static boolean evictedFromCache(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException
                    && String.valueOf(t.getMessage()).contains("evicted from the exhausted cache")) {
                return true;
            }
        }
        return false;
    }

    /** Spring Integration's {@code RedisLockRegistry} in pub/sub mode (locks expire after 60 s, not renewed). */
    static Peer springRedis(String host, int port) {
        return springRedis(host, port, null);
    }

    /**
     * Spring Integration's {@code RedisLockRegistry} in pub/sub mode; with a lease, locks expire
     * after it and its opt-in renewal (a {@code TaskScheduler}, since 6.4) renews each held lock.
     */
    static Peer springRedis(String host, int port, Duration lease) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(host, port);
        factory.afterPropertiesSet();
        factory.start();
        RedisLockRegistry registry = lease == null
                ? new RedisLockRegistry(factory, "bench-spring")
                : new RedisLockRegistry(factory, "bench-spring", lease.toMillis());
        registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
        // obtain() refuses once every cached lock is held, and a lock evicted from the cache between obtain()
        // and lock() fails: held-locks holds many, many-names uses 100,000 names
        registry.setCacheCapacity(Integer.MAX_VALUE);
        ThreadPoolTaskScheduler renewals = new ThreadPoolTaskScheduler();
        if (lease != null) {
            renewals.setThreadNamePrefix("bench-spring-renewal-");
            renewals.setPoolSize(2);
            renewals.initialize();
            registry.setRenewalTaskScheduler(renewals);
        }
        return new Peer() {
            @Override
            public String name() {
                return "Spring RedisLockRegistry";
            }

            @Override
            public Held lock(String name) {
                return lockIn(registry, name);
            }

            @Override
            public boolean isLocked(String name) {
                return isLockedIn(registry, name);
            }

            @Override
            public void close() {
                registry.destroy();
                renewals.shutdown();
                factory.destroy();
            }
        };
    }

    /** {@link ReentrantLock} per name: the in-process floor. */
    static Peer jvmFloor() {
        Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();
        return new Peer() {
            @Override
            public String name() {
                return "ReentrantLock (in-JVM floor)";
            }

            @Override
            public Held lock(String name) {
                ReentrantLock lock = locks.computeIfAbsent(name, n -> new ReentrantLock());
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {}
        };
    }

    /**
     * Two {@code EVALSHA} calls per cycle of a script that only returns, with as many keys and
     * arguments as Cerberus's acquire and release scripts, on one shared Lettuce connection: the
     * floor of any lock that runs a server script per step, so the gap between it and the PING floor
     * is the price of scripting itself, and the gap above it is the work of the lock.
     */
    static Peer scriptFloor(String host, int port) {
        RedisClient client = RedisClient.create("redis://" + host + ":" + port);
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisCommands<String, String> commands = connection.sync();
        String sha = commands.scriptLoad("return 1");
        return new Peer() {
            @Override
            public String name() {
                return "2 empty scripts (EVALSHA, EVALSHA)";
            }

            @Override
            public Held lock(String name) {
                String[] keys = {
                    "cerberus:{" + name + "}:owner",
                    "cerberus:{" + name + "}:readers",
                    "cerberus:{" + name + "}:info",
                    "cerberus:{" + name + "}:queue",
                    "cerberus:{" + name + "}:wake",
                    "cerberus:{" + name + "}:tokens"
                };
                commands.evalsha(
                        sha, io.lettuce.core.ScriptOutputType.INTEGER, keys, "token", "30000", "exclusive", "holder");
                return () -> commands.evalsha(
                        sha, io.lettuce.core.ScriptOutputType.INTEGER, keys, "token", "exclusive", "x", "y");
            }

            @Override
            public void close() {
                connection.close();
                client.shutdown();
            }
        };
    }

    /** Two PINGs per cycle on one shared Lettuce connection: what no lock that acquires and releases can beat. */
    static Peer roundTripFloor(String host, int port) {
        RedisClient client = RedisClient.create("redis://" + host + ":" + port);
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisCommands<String, String> commands = connection.sync();
        return new Peer() {
            @Override
            public String name() {
                return "2 round trips (PING, PING)";
            }

            @Override
            public Held lock(String name) {
                commands.ping();
                return commands::ping;
            }

            @Override
            public void close() {
                connection.close();
                client.shutdown();
            }
        };
    }
}
