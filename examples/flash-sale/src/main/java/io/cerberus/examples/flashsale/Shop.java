package io.cerberus.examples.flashsale;

import io.cerberus.spring.WithDistributedLock;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

/**
 * Sells from the stock in Redis key {@code stock}, counting sales in {@code sold}. The sale is
 * written as many services are: read the stock, check it, write it back one lower. That is not
 * atomic: two buyers who read the same stock both sell the same item, unless a lock makes the
 * three steps one.
 */
@Service
public class Shop {
    static final String STOCK = "stock";
    static final String SOLD = "sold";

    private final RedisCommands<String, String> redis;
    private final Duration work;

    Shop(StatefulRedisConnection<String, String> shopRedis, @Value("${flash-sale.work}") Duration work) {
        this.redis = shopRedis.sync();
        this.work = work;
    }

    /**
     * Sells one item without a lock: oversells when buyers come at once.
     *
     * @return true if an item was sold, false if the stock was empty
     */
    public boolean buyUnlocked() {
        return sellOne();
    }

    /**
     * Sells one item under the distributed lock {@code stock}, held by one request of one
     * instance at a time: never oversells. A buyer waits up to 10 s for the lock.
     *
     * @return true if an item was sold, false if the stock was empty
     * @throws io.cerberus.spring.LockNotAcquiredException if the lock stayed busy for 10 s
     */
    @WithDistributedLock(key = "'stock'", waitTime = "10s")
    public boolean buyLocked() {
        return sellOne();
    }

    /** @return the stock left */
    public long stock() {
        String stock = redis.get(STOCK);
        return stock == null ? 0 : Long.parseLong(stock);
    }

    /** @return how many items were sold */
    public long sold() {
        String sold = redis.get(SOLD);
        return sold == null ? 0 : Long.parseLong(sold);
    }

    private boolean sellOne() {
        long stock = stock();
        if (stock <= 0) {
            return false;
        }
        simulateWork();
        redis.set(STOCK, Long.toString(stock - 1));
        redis.incr(SOLD);
        return true;
    }

    /**
     * Stands for what a real sale does between reading and writing the stock (pricing, a call to
     * the warehouse); it widens the window in which unlocked buyers overlap, so the demo shows it.
     */
    private void simulateWork() {
        try {
            Thread.sleep(work.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while selling", e);
        }
    }
}
