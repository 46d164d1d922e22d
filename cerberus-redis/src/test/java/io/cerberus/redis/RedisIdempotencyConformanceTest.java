package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.Engines;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redis idempotency store passes the store conformance suite against a real redis-server. */
class RedisIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected String engineUri() {
        return server.uri();
    }

    @Test
    void aClaimAlwaysCarriesItsExpirySoNoRecordBecomesImmortal() {
        String id = "ns/v1:immortal-check";
        try (io.cerberus.spi.LockEngine engine = Engines.open(server.uri(), Duration.ofSeconds(5))) {
            io.cerberus.spi.IdempotencyStore records = engine.idempotencyStore().orElseThrow();
            assertThat(records.claim(id, "f", "t1", Duration.ofSeconds(30))).isEmpty();
            assertThat(server.admin().pttl(RedisIdempotencyStore.key(id))).as("claimed with its lease").isBetween(1L, 30_000L);
            assertThat(records.complete(id, "t1", "done".getBytes(java.nio.charset.StandardCharsets.UTF_8), false, Duration.ofHours(1))).isTrue();
            assertThat(server.admin().pttl(RedisIdempotencyStore.key(id))).as("kept for the retention").isBetween(30_001L, 3_600_000L);
            assertThat(records.read(id)).hasValueSatisfying(record -> assertThat(new String(record.result(),
                    java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("done"));
        }
    }
}
