package io.cerberus.bench;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/** The peers, each connected to the same Redis server. */
final class Peers {
    private Peers() {
    }

    /** Cerberus on {@code redis://} (or any engine URI). */
    static Peer cerberus(String uri) {
        Cerberus cerberus = Cerberus.builder().engine(uri).namespace("bench").build();
        return new Peer() {
            @Override
            public String name() {
                return "Cerberus";
            }

            @Override
            public Held lock(String name) {
                DistributedLock lock = cerberus.lock(name);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                cerberus.close();
            }
        };
    }

    /** Redisson's {@code RLock} (pub/sub waiting, watchdog renewal). */
    static Peer redisson(String host, int port) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + host + ":" + port);
        RedissonClient client = Redisson.create(config);
        return new Peer() {
            @Override
            public String name() {
                return "Redisson RLock";
            }

            @Override
            public Held lock(String name) {
                RLock lock = client.getLock("bench:" + name);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    /** Spring Integration's {@code RedisLockRegistry} in pub/sub mode. */
    static Peer springRedis(String host, int port) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(host, port);
        factory.afterPropertiesSet();
        factory.start();
        RedisLockRegistry registry = new RedisLockRegistry(factory, "bench-spring");
        registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
        return new Peer() {
            @Override
            public String name() {
                return "Spring RedisLockRegistry";
            }

            @Override
            public Held lock(String name) {
                Lock lock = registry.obtain(name);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                registry.destroy();
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
            public void close() {
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
