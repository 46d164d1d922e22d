package io.cerberus.integration;

import io.cerberus.servers.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The registry contract on a real Redis, the store {@code RedisLockRegistry} users run. */
class RedisLockRegistryContractTest extends AbstractLockRegistryContractTest {
    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    String uri() {
        return redis.uri();
    }
}
