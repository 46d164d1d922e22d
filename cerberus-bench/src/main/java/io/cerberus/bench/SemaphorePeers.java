package io.cerberus.bench;

import io.cerberus.Cerberus;
import io.cerberus.DistributedSemaphore;
import io.cerberus.Permits;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The peers of the semaphore workloads, as {@link Peer}s: {@link Peer#lock(String)} takes one permit of the
 * semaphore of that name, of the permits the peer was made for, waiting as long as it takes, and the hold gives
 * it back. Each peer connects on its own; the peers of a server hold nothing in common.
 */
final class SemaphorePeers {
    /** The peer the Redis semaphore tables are compared with. */
    static final String REDISSON_EXPIRABLE = "Redisson RPermitExpirableSemaphore";

    static final String REDISSON_SEMAPHORE = "Redisson RSemaphore (permits never expire)";
    /** The peer the ZooKeeper semaphore tables are compared with. */
    static final String CURATOR = "Curator InterProcessSemaphoreV2";
    /** The lease of a Redisson permit: its expiry, as a Cerberus permit's default lease (not renewed). */
    static final Duration REDISSON_LEASE = Duration.ofSeconds(30);

    private SemaphorePeers() {}

    /**
     * Cerberus's semaphore on any engine URI: {@code semaphore(name, permits).acquire(1, wait)}, a permit renewed
     * while held (30 s lease), given back by closing the handle.
     */
    static Peer cerberus(String uri, int permits) {
        Cerberus cerberus = Cerberus.builder().engine(uri).namespace("bench").build();
        return new Peer() {
            @Override
            public String name() {
                return "Cerberus";
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                DistributedSemaphore semaphore = cerberus.semaphore(name, permits);
                Permits permit = semaphore.acquire(1, Peers.ASYNC_WAIT);
                return permit::close;
            }

            @Override
            public void close() {
                cerberus.close();
            }
        };
    }

    /**
     * Redisson's {@code RPermitExpirableSemaphore}: {@code trySetPermits(permits)} once per name, then
     * {@code acquire(leaseTime, unit)} (a permit id that expires after {@link #REDISSON_LEASE}, not renewed) and
     * {@code release(permitId)}.
     */
    static Peer redissonExpirable(String host, int port, int permits) {
        RedissonClient client = redisson(host, port);
        Map<String, RPermitExpirableSemaphore> semaphores = new ConcurrentHashMap<>();
        return new Peer() {
            @Override
            public String name() {
                return REDISSON_EXPIRABLE;
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                RPermitExpirableSemaphore semaphore = semaphores.computeIfAbsent(name, n -> {
                    RPermitExpirableSemaphore made = client.getPermitExpirableSemaphore("bench-pes:" + n);
                    made.trySetPermits(permits);
                    return made;
                });
                String permitId = semaphore.acquire(REDISSON_LEASE.toMillis(), TimeUnit.MILLISECONDS);
                return () -> semaphore.release(permitId);
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    /**
     * Redisson's {@code RSemaphore}, for reference: {@code trySetPermits(permits)} once per name, then
     * {@code acquire()} and {@code release()}; a permit is a count, kept for ever by a holder that dies.
     */
    static Peer redissonSemaphore(String host, int port, int permits) {
        RedissonClient client = redisson(host, port);
        Map<String, RSemaphore> semaphores = new ConcurrentHashMap<>();
        return new Peer() {
            @Override
            public String name() {
                return REDISSON_SEMAPHORE;
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                RSemaphore semaphore = semaphores.computeIfAbsent(name, n -> {
                    RSemaphore made = client.getSemaphore("bench-semaphore:" + n);
                    made.trySetPermits(permits);
                    return made;
                });
                semaphore.acquire();
                return semaphore::release;
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    private static RedissonClient redisson(String host, int port) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + host + ":" + port);
        return Redisson.create(config);
    }

    /**
     * Curator's {@code InterProcessSemaphoreV2}, one per name shared by the threads: {@code acquire()} gives a lease
     * (a node of the client's session), {@code returnLease} gives it back.
     */
    static Peer curator(String connectString, int permits) {
        CuratorFramework client = ZooKeeperPeers.connect(connectString);
        Map<String, InterProcessSemaphoreV2> semaphores = new ConcurrentHashMap<>();
        return new Peer() {
            @Override
            public String name() {
                return CURATOR;
            }

            @Override
            public Held lock(String name) throws InterruptedException {
                InterProcessSemaphoreV2 semaphore = semaphores.computeIfAbsent(
                        name, n -> new InterProcessSemaphoreV2(client, "/bench-curator-semaphore/" + n, permits));
                Lease lease;
                try {
                    lease = semaphore.acquire();
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("Curator could not acquire a permit of " + name, e);
                }
                return () -> semaphore.returnLease(lease);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
