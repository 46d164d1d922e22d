package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.Outcome;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis idempotency store passes the store conformance suite against a real redis-server. */
class RedisIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    @RegisterExtension
    static final ServerExtension<RedisWithAdmin> SERVER = ServerExtension.perClass(RedisWithAdmin::start);

    @Override
    protected String engineUri() {
        return SERVER.uri();
    }

    @Test
    void aClaimAlwaysCarriesItsExpirySoNoRecordBecomesImmortal() {
        String id = "ns/v1:immortal-check";
        try (io.cerberus.spi.LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            io.cerberus.spi.IdempotencyStore records =
                    engine.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            assertThat(records.claim(id, "f", "t1", Duration.ofSeconds(30))).isEmpty();
            assertThat(SERVER.get().admin().pttl(RedisIdempotencyStore.key(id)))
                    .as("claimed with its lease")
                    .isBetween(1L, 30_000L);
            assertThat(records.complete(
                            id,
                            "t1",
                            "done".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                            false,
                            Duration.ofHours(1)))
                    .isTrue();
            assertThat(SERVER.get().admin().pttl(RedisIdempotencyStore.key(id)))
                    .as("kept for the retention")
                    .isBetween(30_001L, 3_600_000L);
            assertThat(records.read(id))
                    .hasValueSatisfying(
                            record -> assertThat(new String(record.result(), java.nio.charset.StandardCharsets.UTF_8))
                                    .isEqualTo("done"));
        }
    }

    @Test
    void withWaitReplicasARecordNoReplicaAcknowledgesIsRefusedAndTheOperationDoesNotRun() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine(SERVER.uri() + "?waitReplicas=1&waitTimeout=200ms")
                .build()) {
            IdempotencyGuard guard =
                    cerberus.idempotency(IdempotencyOptions.defaults().withStoreAttempts(1));
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "no-replica");
            AtomicInteger runs = new AtomicInteger();
            assertThatThrownBy(() -> guard.execute(key, Duration.ofHours(1), () -> "charged " + runs.incrementAndGet()))
                    .isInstanceOf(IdempotencyStoreUnavailableException.class)
                    .rootCause()
                    .hasMessageContaining("only 0 of the 1 replica")
                    .hasMessageContaining("claim was released again");
            assertThat(runs).hasValue(0);
            try (io.cerberus.spi.LockEngine engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
                assertThat(engine.ability(KeepsIdempotencyRecords.class)
                                .orElseThrow()
                                .idempotencyStore()
                                .read(cerberus.namespace() + "/" + key.id()))
                        .as("the unacknowledged claim was released")
                        .isEmpty();
            }
        }
    }

    @Test
    void withWaitReplicasARecordIsOnTheReplicaWhenTheCallerLearnsOfIt() throws Exception {
        try (RedisWithAdmin replica = RedisWithAdmin.start(
                        "--replicaof",
                        "127.0.0.1",
                        Integer.toString(SERVER.get().port()));
                Cerberus cerberus = Cerberus.builder()
                        .engine(SERVER.uri() + "?waitReplicas=1&waitTimeout=5s")
                        .build()) {
            Poll.until(
                    "the replica to be in sync",
                    TestTimes.millis(20_000),
                    () -> replica.admin().info("replication").contains("master_link_status:up"));
            IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults());
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "replicated");
            String recordKey = RedisIdempotencyStore.key(cerberus.namespace() + "/" + key.id());
            Outcome<String> outcome = guard.execute(key, Duration.ofHours(1), () -> {
                assertThat(replica.admin().hget(recordKey, "s"))
                        .as("the claim is on the replica before the operation runs")
                        .isEqualTo("0");
                return "charged";
            });
            assertThat(outcome.executed()).isTrue();
            assertThat(replica.admin().hget(recordKey, "s"))
                    .as("the completion is on the replica when execute returns")
                    .isEqualTo("1");
        }
    }
}
