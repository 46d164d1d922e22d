package io.cerberus.examples.flashsale;

import io.cerberus.spring.Idempotent;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.springframework.stereotype.Service;

/**
 * Charges buyers, counting charges in Redis key {@code charges}. {@link Idempotent @Idempotent}
 * keyed on the buyer's idempotency key: a buyer who clicks "pay" three times is charged once, on
 * every instance, whoever calls this method (the web controller, or a message listener).
 */
@Service
public class Payments {
    static final String CHARGES = "charges";

    private final RedisCommands<String, String> redis;

    Payments(StatefulRedisConnection<String, String> shopRedis) {
        this.redis = shopRedis.sync();
    }

    /**
     * @param buyer who pays
     * @param cents how much
     * @param key the buyer's idempotency key: the same key is one charge
     * @return the receipt, the first one for a repeated key
     */
    @Idempotent(key = "#key", retention = "1d")
    public Receipt charge(String buyer, long cents, String key) {
        long number = redis.incr(CHARGES);
        return new Receipt("payment-" + number, buyer, cents);
    }

    /** @return how many charges were made */
    public long charges() {
        String charges = redis.get(CHARGES);
        return charges == null ? 0 : Long.parseLong(charges);
    }

    /**
     * @param paymentId the payment's id
     * @param buyer who paid
     * @param cents how much
     */
    public record Receipt(String paymentId, String buyer, long cents) {}
}
