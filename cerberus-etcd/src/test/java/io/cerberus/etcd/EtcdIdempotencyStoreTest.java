package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.servers.EtcdServer;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.Inspects;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** etcd-specific cases of the idempotency store beside the conformance suite, against a real etcd. */
class EtcdIdempotencyStoreTest {
    private static final LockKeys KEYS = new LockKeys("cerberus");

    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdServer::start);

    private static Client etcd;
    private LockEngine engine;
    private IdempotencyStore records;
    private String namespace;

    @BeforeAll
    static void connect() {
        etcd = Client.builder()
                .endpoints(EtcdTarget.parse(SERVER.uri()).endpoints().toArray(String[]::new))
                .build();
    }

    @AfterAll
    static void disconnect() {
        etcd.close();
    }

    @BeforeEach
    void open() {
        engine = Engines.open(SERVER.uri(), Duration.ofSeconds(5));
        records = engine.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
        namespace = "idem-" + UUID.randomUUID();
    }

    @AfterEach
    void close() {
        engine.close();
    }

    private KeyValue stored(String id) throws Exception {
        List<KeyValue> found = etcd.getKVClient()
                .get(KEYS.idempotencyKey(id))
                .get(5, TimeUnit.SECONDS)
                .getKvs();
        assertThat(found).as("the record's key").hasSize(1);
        return found.get(0);
    }

    /** @return the TTL etcd granted the lease, in seconds; -1 if the lease is gone */
    private static long grantedTtl(long leaseId) throws Exception {
        return etcd.getLeaseClient()
                .timeToLive(leaseId, LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getGrantedTTL();
    }

    private static long remainingTtl(long leaseId) throws Exception {
        return etcd.getLeaseClient()
                .timeToLive(leaseId, LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getTTL();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyRecordKeyCarriesTheLeaseOfItsStateSoNoRecordBecomesImmortal() throws Exception {
        String id = namespace + "/v1:leased";
        assertThat(records.claim(id, "f", "t1", Duration.ofSeconds(30))).isEmpty();
        long claimLease = stored(id).getLease();
        assertThat(claimLease).as("IN_PROGRESS is on a lease").isNotZero();
        assertThat(grantedTtl(claimLease)).as("of the claim's length").isEqualTo(30);

        assertThat(records.complete(id, "t1", utf8("done"), false, Duration.ofHours(1)))
                .isTrue();
        long retentionLease = stored(id).getLease();
        assertThat(retentionLease)
                .as("COMPLETED is on another lease")
                .isNotZero()
                .isNotEqualTo(claimLease);
        assertThat(grantedTtl(retentionLease)).as("of about the retention").isBetween(3600L, 3600L + 36 + 1);
        long deadline = System.nanoTime() + TestTimes.millis(5000).toNanos();
        while (remainingTtl(claimLease) > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        assertThat(remainingTtl(claimLease))
                .as("the claim's lease is revoked once unused")
                .isEqualTo(-1);

        String forever = namespace + "/v1:forever";
        assertThat(records.claim(forever, "f", "t2", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.complete(forever, "t2", utf8("kept"), false, null)).isTrue();
        assertThat(stored(forever).getLease()).as("kept for ever: no lease").isZero();
        assertThat(records.read(forever))
                .hasValueSatisfying(record -> assertThat(record.result()).isEqualTo(utf8("kept")));
    }

    @Test
    void completionsWithTheSameRetentionShareOneLease() throws Exception {
        String first = namespace + "/v1:first";
        String second = namespace + "/v1:second";
        assertThat(records.claim(first, "f", "t1", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.claim(second, "f", "t2", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.complete(first, "t1", utf8("1"), false, Duration.ofDays(1)))
                .isTrue();
        assertThat(records.complete(second, "t2", utf8("2"), false, Duration.ofDays(1)))
                .isTrue();
        assertThat(stored(second).getLease()).isEqualTo(stored(first).getLease());
    }

    @Test
    void aWaiterWakesSoonAfterAnotherPartyCompletesTheRecord() throws Exception {
        String id = namespace + "/v1:awaited";
        assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30))).isEmpty();
        try (LockEngine other = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            IdempotencyStore waiting =
                    other.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            assertThat(waiting.notifiesChanges()).isTrue();
            long watchersBefore = SERVER.get().counter("etcd_debugging_mvcc_watcher_total");
            long[] wokeAt = new long[1];
            Thread waiter = new Thread(() -> {
                try {
                    waiting.awaitChange(id, Duration.ofSeconds(10));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                wokeAt[0] = System.nanoTime();
            });
            waiter.start();
            long deadline = System.nanoTime() + TestTimes.millis(5000).toNanos();
            while (SERVER.get().counter("etcd_debugging_mvcc_watcher_total") <= watchersBefore
                    && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
            assertThat(SERVER.get().counter("etcd_debugging_mvcc_watcher_total"))
                    .as("the waiter watches the record")
                    .isGreaterThan(watchersBefore);
            assertThat(SERVER.get().counter("etcd_debugging_mvcc_slow_watcher_total"))
                    .as("from now, not an unsynced watch")
                    .isZero();
            assertThat(waiter.isAlive()).isTrue();
            long completedAt = System.nanoTime();
            assertThat(records.complete(id, "owner", utf8("done"), false, Duration.ofHours(1)))
                    .isTrue();
            waiter.join(TestTimes.millis(10_000).toMillis());
            assertThat(waiter.isAlive()).isFalse();
            assertThat(Duration.ofNanos(wokeAt[0] - completedAt))
                    .as("woken by the completion, not the 10 s bound")
                    .isLessThan(TestTimes.millis(1000));
        }
    }

    @Test
    void aResultOverEtcdsRequestLimitIsRefusedAndTheClaimStaysOwned() {
        String id = namespace + "/v1:huge";
        assertThat(records.claim(id, "f", "t1", Duration.ofSeconds(30))).isEmpty();
        byte[] huge = new byte[IdempotencyValues.MAX_RESULT_BYTES + 1];
        assertThatThrownBy(() -> records.complete(id, "t1", huge, false, Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(IdempotencyValues.MAX_RESULT_BYTES + " bytes")
                .hasMessageContaining("1.5 MiB");
        assertThat(records.read(id))
                .hasValueSatisfying(record -> assertThat(record.completed()).isFalse());
        assertThat(records.complete(id, "t1", new byte[IdempotencyValues.MAX_RESULT_BYTES], false, Duration.ofHours(1)))
                .as("the largest result allowed fits in one etcd request")
                .isTrue();
        assertThat(records.read(id))
                .hasValueSatisfying(record -> assertThat(record.result()).hasSize(IdempotencyValues.MAX_RESULT_BYTES));
    }

    @Test
    void aRepeatedCompleteOrReleaseByTheSameAttemptReportsWhatTheFirstDid() {
        String completed = namespace + "/v1:completed-twice";
        assertThat(records.claim(completed, "f", "t1", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.complete(completed, "t1", utf8("done"), false, Duration.ofHours(1)))
                .isTrue();
        assertThat(records.complete(completed, "t1", utf8("done"), false, Duration.ofHours(1)))
                .as("it is stored")
                .isTrue();
        assertThat(records.release(completed, "t1"))
                .as("a completed record is not released")
                .isFalse();

        String released = namespace + "/v1:released-twice";
        assertThat(records.claim(released, "f", "t2", Duration.ofSeconds(30))).isEmpty();
        assertThat(records.release(released, "t2")).isTrue();
        assertThat(records.read(released)).isEmpty();
        assertThat(records.complete(released, "t2", utf8("late"), false, Duration.ofHours(1)))
                .isFalse();
    }

    @Test
    void anotherClientOfTheSameAttemptCanRenewCompleteAndRelease() {
        String id = namespace + "/v1:shared-attempt";
        assertThat(records.claim(id, "f", "t1", Duration.ofSeconds(30))).isEmpty();
        try (LockEngine other = Engines.open(SERVER.uri(), Duration.ofSeconds(5))) {
            IdempotencyStore elsewhere =
                    other.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            assertThat(elsewhere.renew(id, "t1", Duration.ofSeconds(30)))
                    .as("renewed from the value alone")
                    .isTrue();
            assertThat(elsewhere.renew(id, "t2", Duration.ofSeconds(30)))
                    .as("not by another token")
                    .isFalse();
            assertThat(elsewhere.complete(id, "t1", utf8("done"), true, Duration.ofHours(1)))
                    .isTrue();
        }
        assertThat(records.read(id)).hasValueSatisfying(record -> {
            assertThat(record.completed()).isTrue();
            assertThat(record.failure()).isTrue();
            assertThat(record.fingerprint()).isEqualTo("f");
        });
        assertThat(records.renew(id, "t1", Duration.ofSeconds(30)))
                .as("a completed record is not renewed")
                .isFalse();
    }

    @Test
    void recordsStayOutOfTheLockListingsOfTheirNamespace() {
        String id = namespace + "/v1:unlisted";
        assertThat(records.claim(id, "f", "t1", Duration.ofSeconds(30))).isEmpty();
        assertThat(engine.ability(Inspects.class).orElseThrow().inspect(namespace, ""))
                .isEmpty();
        assertThat(KEYS.idempotencyKey(id).toString(StandardCharsets.UTF_8))
                .isEqualTo("cerberus/" + namespace + "/!idempotency/v1%3Aunlisted");
    }
}
