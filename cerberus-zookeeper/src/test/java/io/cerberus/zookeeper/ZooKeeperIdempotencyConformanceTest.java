package io.cerberus.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockInfo;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.servers.ZooKeeperServer;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LockEngine;
import io.cerberus.testkit.AbstractIdempotencyStoreConformanceTest;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The ZooKeeper idempotency store passes the store conformance suite against a real ZooKeeper server, and keeps its own promises. */
class ZooKeeperIdempotencyConformanceTest extends AbstractIdempotencyStoreConformanceTest {
    @RegisterExtension
    static final ServerExtension<ZooKeeperServer> SERVER = ServerExtension.perClass(ZooKeeperServer::start);

    @Override
    protected String engineUri() {
        return SERVER.uri() + "/idempotency-conformance?sessionTimeout=2s";
    }

    private static LockEngine open(String query) {
        return Engines.open(SERVER.uri() + "/idempotency-test" + query, Duration.ofSeconds(10));
    }

    private static String freshId() {
        return "ns-" + UUID.randomUUID() + "/v1:" + UUID.randomUUID();
    }

    @Test
    void aLeaseAndARetentionEndOnTheEnsemblesClockAndTheExpiredRecordIsDeleted() throws Exception {
        try (LockEngine engine = open("")) {
            IdempotencyStore records =
                    engine.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            String id = freshId();
            long claimed = System.nanoTime();
            assertThat(records.claim(id, "f", "crashed", Duration.ofMillis(300)))
                    .isEmpty();
            assertThat(records.claim(id, "f", "second", Duration.ofSeconds(30)))
                    .as("held while the lease runs")
                    .hasValueSatisfying(record -> assertThat(record.token()).isEqualTo("crashed"));
            Poll.until(
                    "the lease of 300ms to end",
                    TestTimes.millis(5_000),
                    () -> records.claim(id, "f", "second", Duration.ofSeconds(30))
                            .isEmpty());
            assertThat(Duration.ofNanos(System.nanoTime() - claimed))
                    .as("not before the lease")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(250));

            assertThat(records.complete(
                            id, "second", "done".getBytes(StandardCharsets.UTF_8), false, Duration.ofSeconds(1)))
                    .isTrue();
            long completed = System.nanoTime();
            assertThat(records.read(id))
                    .hasValueSatisfying(record -> assertThat(record.completed()).isTrue());
            Poll.until(
                    "the retention of 1s to end",
                    TestTimes.millis(10_000),
                    () -> records.read(id).isEmpty());
            assertThat(Duration.ofNanos(System.nanoTime() - completed))
                    .as("not before the retention")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(900));
            assertThat(exists(ZooKeeperIdempotencyStore.path("/idempotency-test", id)))
                    .as("the read deleted the expired record")
                    .isFalse();
            assertThat(records.claim(id, "f", "third", Duration.ofSeconds(30)))
                    .as("and the key is free")
                    .isEmpty();
        }
    }

    /** Looks at the ensemble with a client of its own. */
    private static boolean exists(String path) throws Exception {
        try (CuratorFramework client =
                CuratorFrameworkFactory.newClient(SERVER.get().connectString(), new RetryNTimes(3, 100))) {
            client.start();
            return client.checkExists().forPath(path) != null;
        }
    }

    @Test
    void aClaimThatLosesEveryRoundAnswersInProgressSoAFailOpenGuardDoesNotRunUnguarded() throws Exception {
        String uri = SERVER.uri() + "/idempotency-rounds";
        try (Cerberus cerberus =
                        Cerberus.builder().engine(uri).namespace("rounds").build();
                CuratorFramework client =
                        CuratorFrameworkFactory.newClient(SERVER.get().connectString(), new RetryNTimes(3, 100))) {
            client.start();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "contended");
            // an expired record whose owner token child is gone: every takeover of it fails, as when others keep
            // changing it
            client.create()
                    .creatingParentContainersIfNeeded()
                    .forPath(
                            ZooKeeperIdempotencyStore.path("/idempotency-rounds", "rounds/" + key.id()),
                            StoredRecord.inProgress("another", key.fingerprint(), 1)
                                    .encode());
            java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
            assertThatThrownBy(() -> cerberus.idempotency(IdempotencyOptions.defaults()
                                    .rejectingWhenInProgress()
                                    .failingOpen())
                            .execute(key, Duration.ofHours(1), () -> "charged " + runs.incrementAndGet()))
                    .isInstanceOf(io.cerberus.idempotency.OperationInProgressException.class);
            assertThat(runs).as("not run unguarded as if the store were down").hasValue(0);
        }
    }

    @Test
    void aWaitingDuplicateWakesSoonAfterAnotherPartyCompletes() throws Exception {
        try (LockEngine waiting = open("");
                LockEngine completing = open("")) {
            IdempotencyStore waiterStore =
                    waiting.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            IdempotencyStore ownerStore = completing
                    .ability(KeepsIdempotencyRecords.class)
                    .orElseThrow()
                    .idempotencyStore();
            assertThat(waiterStore.notifiesChanges()).isTrue();
            String id = freshId();
            assertThat(ownerStore.claim(id, "f", "owner", Duration.ofSeconds(30)))
                    .isEmpty();
            AtomicLong wokeAt = new AtomicLong();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            waiterStore.awaitChange(id, Duration.ofSeconds(10));
                            wokeAt.set(System.nanoTime());
                        } catch (Throwable e) {
                            failed.set(e);
                        }
                    },
                    "duplicate");
            waiter.start();
            Poll.until(
                    "the duplicate to wait on its watch",
                    TestTimes.millis(10_000),
                    () -> Arrays.stream(waiter.getStackTrace())
                            .anyMatch(frame -> frame.getClassName().equals(CountDownLatch.class.getName())));
            long completedAt = System.nanoTime();
            assertThat(ownerStore.complete(id, "owner", new byte[] {1}, false, Duration.ofHours(1)))
                    .isTrue();
            waiter.join(TestTimes.millis(10_000).toMillis());
            assertThat(failed.get()).isNull();
            assertThat(wokeAt.get()).as("woke").isNotZero();
            assertThat(Duration.ofNanos(wokeAt.get() - completedAt))
                    .as("soon after the completion, not after the 10s asked")
                    .isLessThan(Duration.ofSeconds(1));
        }
    }

    @Test
    void aResultOverTheSizeLimitIsRefusedAndOneAtTheLimitIsKept() {
        try (LockEngine engine = open("")) {
            IdempotencyStore records =
                    engine.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            String id = freshId();
            assertThat(records.claim(id, "f", "owner", Duration.ofSeconds(30))).isEmpty();
            byte[] tooLarge = new byte[ZooKeeperIdempotencyStore.MAX_RESULT_BYTES + 1];
            assertThatThrownBy(() -> records.complete(id, "owner", tooLarge, false, Duration.ofHours(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at most 1000000 bytes")
                    .hasMessageContaining("jute.maxbuffer");
            assertThat(records.read(id))
                    .as("nothing was written")
                    .hasValueSatisfying(record -> assertThat(record.completed()).isFalse());
            byte[] atTheLimit = new byte[ZooKeeperIdempotencyStore.MAX_RESULT_BYTES];
            Arrays.fill(atTheLimit, (byte) 7);
            assertThat(records.complete(id, "owner", atTheLimit, false, Duration.ofHours(1)))
                    .isTrue();
            assertThat(records.read(id))
                    .hasValueSatisfying(record -> assertThat(record.result()).isEqualTo(atTheLimit));
        }
    }

    @Test
    void appsWithTheirOwnUsersCannotReadOrTakeEachOthersRecords() {
        String id = freshId();
        // a root only clients with credentials use: one a client without them made would be world-open, and refused
        try (LockEngine appA = Engines.open(
                        SERVER.uri() + "/idempotency-tenants?user=app-a&password=secret-a", Duration.ofSeconds(10));
                LockEngine appB = Engines.open(
                        SERVER.uri() + "/idempotency-tenants?user=app-b&password=secret-b", Duration.ofSeconds(10))) {
            IdempotencyStore recordsA =
                    appA.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            IdempotencyStore recordsB =
                    appB.ability(KeepsIdempotencyRecords.class).orElseThrow().idempotencyStore();
            assertThat(recordsA.claim(id, "f", "a", Duration.ofSeconds(30))).isEmpty();
            assertThatThrownBy(() -> recordsB.read(id))
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining("not authorised")
                    .hasMessageNotContaining("secret-b");
            assertThatThrownBy(() -> recordsB.claim(id, "f", "b", Duration.ofSeconds(30)))
                    .isInstanceOf(EngineUnavailableException.class);
            assertThatThrownBy(() -> recordsB.release(id, "a")).isInstanceOf(EngineUnavailableException.class);
            assertThat(recordsA.read(id))
                    .hasValueSatisfying(record -> assertThat(record.token()).isEqualTo("a"));
        }
    }

    @Test
    void recordsLiveBesideTheLocksOfTheirNamespaceWithoutShowingAsLocks() throws Exception {
        try (Cerberus cerberus = Cerberus.builder()
                .engine(SERVER.uri() + "/idempotency-test")
                .namespace("beside-" + UUID.randomUUID())
                .build()) {
            DistributedLock lock = cerberus.lock("order:1");
            lock.lock();
            cerberus.idempotency(IdempotencyOptions.defaults())
                    .execute(IdempotencyKey.ofContent("charge", "order:1"), Duration.ofHours(1), () -> "charged");
            List<LockInfo> locks = cerberus.inspect("");
            assertThat(locks).extracting(LockInfo::name).containsExactly("order:1");
            lock.unlock();
        }
    }

    @Test
    void idsAreEncodedIntoOneNodeNameBelowTheirNamespace() {
        assertThat(ZooKeeperIdempotencyStore.path("/root", "billing/v1:ab12"))
                .isEqualTo("/root/billing/.idempotency/v1%3Aab12");
        assertThat(ZooKeeperIdempotencyStore.path("/root", "a/b/../c"))
                .isEqualTo("/root/a%2Fb%2F%2E%2E/.idempotency/c");
        assertThat(ZooKeeperIdempotencyStore.path("/root", "no-namespace"))
                .isEqualTo("/root/.idempotency/no-namespace");
    }
}
