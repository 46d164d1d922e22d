package io.cerberus.shedlock;

import io.cerberus.servers.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's provider suite on a real Redis server. */
class RedisShedLockSuiteTest extends ShedLockSuite {
    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @Override
    protected String engineUri() {
        return redis.uri();
    }
}
