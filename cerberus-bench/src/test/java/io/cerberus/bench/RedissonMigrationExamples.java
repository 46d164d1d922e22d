package io.cerberus.bench;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.DistributedReadWriteLock;
import io.cerberus.Fence;
import io.cerberus.Lease;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The code of docs/MIGRATION.md, "From Redisson", compiled here beside Redisson; the Cerberus side
 * also runs in RedissonMigrationExamplesTest.
 */
final class RedissonMigrationExamples {
    final Shipping shipping = new Shipping();
    final Ledger ledger = new Ledger();
    final Catalog catalog = new Catalog();
    final Report report = new Report();
    final String order = "42";
    final String entry = "debit 10";

    static class Shipping {
        int shipped;

        void ship(String order) {
            shipped++;
        }
    }

    static class Ledger {
        long lastToken = -1;

        void write(String entry, long token) {
            lastToken = token;
        }
    }

    static class Catalog {
        int reads;

        void read() {
            reads++;
        }
    }

    static class Report {
        Fence fence;
        boolean aborted;

        void write(Fence fence) {
            this.fence = fence;
        }

        void abort() {
            aborted = true;
        }
    }

    void redissonLock(RedissonClient redisson) {
        RLock lock = redisson.getLock("order:42");
        lock.lock();
        try {
            shipping.ship(order);
        } finally {
            lock.unlock();
        }
    }

    void cerberusLock(Cerberus cerberus) {
        DistributedLock lock = cerberus.lock("order:42");
        lock.lock();
        try {
            shipping.ship(order);
        } finally {
            lock.unlock();
        }
    }

    void bothTryLock(DistributedLock lock) throws InterruptedException {
        if (lock.tryLock(100, 10, TimeUnit.SECONDS)) {
            try {
                shipping.ship(order);
            } finally {
                lock.unlock();
            }
        }
    }

    void redissonFencedLock(RedissonClient redisson) {
        RFencedLock lock = redisson.getFencedLock("ledger");
        Long token = lock.lockAndGetToken();
        try {
            ledger.write(entry, token);
        } finally {
            lock.unlock();
        }
    }

    void cerberusFencedLock(Cerberus cerberus) throws InterruptedException {
        try (Lease lease = cerberus.lock("ledger").acquire(Duration.ofSeconds(30))) {
            ledger.write(entry, lease.fencingToken());
        }
    }

    void redissonReadWriteLock(RedissonClient redisson) {
        RReadWriteLock rw = redisson.getReadWriteLock("catalog");
        rw.readLock().lock();
        try {
            catalog.read();
        } finally {
            rw.readLock().unlock();
        }
    }

    void cerberusReadWriteLock(Cerberus cerberus) {
        DistributedReadWriteLock rw = cerberus.readWriteLock("catalog");
        rw.readLock().lock();
        try {
            catalog.read();
        } finally {
            rw.readLock().unlock();
        }
    }

    void redissonForceUnlock(RedissonClient redisson) {
        redisson.getLock("order:42").forceUnlock();
    }

    void cerberusForceRelease(Cerberus cerberus) {
        cerberus.inspect("order:42").stream()
                .filter(hold -> hold.name().equals("order:42"))
                .findFirst()
                .ifPresent(hold -> cerberus.forceRelease("order:42", hold.fencingToken()));
    }

    Config redissonWatchdog() {
        Config config = new Config();
        config.setLockWatchdogTimeout(10_000);
        return config;
    }

    Cerberus cerberusLease() {
        Cerberus cerberus = Cerberus.builder()
                .engine("redis://redis.internal:6379")
                .defaultLease(Duration.ofSeconds(10))
                .build();
        return cerberus;
    }

    void cerberusLoss(Cerberus cerberus) throws InterruptedException {
        try (Lease lease = cerberus.lock("report").acquire(Duration.ofSeconds(5))) {
            lease.onLost((lost, reason) -> report.abort());
            report.write(lease.fence());
        }
    }

    void redissonAsync(RedissonClient redisson) {
        RLock lock = redisson.getLock("report");
        long threadId = Thread.currentThread().getId();
        lock.lockAsync(threadId).thenCompose(locked -> lock.unlockAsync(threadId));
    }

    CompletableFuture<Void> cerberusAsync(Cerberus cerberus) {
        return cerberus.lock("report").acquireAsync(Duration.ofSeconds(5)).thenCompose(lease -> lease.releaseAsync());
    }
}
