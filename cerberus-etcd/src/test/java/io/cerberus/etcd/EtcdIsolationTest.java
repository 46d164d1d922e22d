package io.cerberus.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.servers.EtcdServer;
import io.cerberus.servers.ManagedProcess;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.ClientProcess;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-application isolation enforced by etcd itself: one user and role per application, the role
 * granted only the prefix of the application's namespace ({@code cerberus/<namespace>/}), which
 * holds its locks and its idempotency records. The lease APIs are outside the roles: what another
 * application's user can and cannot do with this application's leases is asserted here too
 * (docs/ETCD.md, "Tenancy").
 */
class EtcdIsolationTest {
    private static final int TTL_SECONDS = 2;

    @RegisterExtension
    static final ServerExtension<EtcdServer> SERVER = ServerExtension.perClass(EtcdIsolationTest::startWithAppUsers);

    /** @return an etcd with authentication on, a root user and one user and role per application */
    private static EtcdServer startWithAppUsers() {
        EtcdServer server = EtcdServer.start();
        try {
            server.ctl("user", "add", "root", "--new-user-password=r00t-secret");
            server.ctl("user", "grant-role", "root", "root");
            for (String app : new String[] {"appA", "appB"}) {
                server.ctl("role", "add", app);
                server.ctl("role", "grant-permission", app, "readwrite", "cerberus/" + app + "/", "--prefix=true");
                server.ctl("user", "add", app, "--new-user-password=" + app + "-secret");
                server.ctl("user", "grant-role", app, app);
            }
            server.ctl("auth", "enable");
            return server;
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    private static Cerberus app(String user, String namespace) {
        return Cerberus.builder()
                .engine(uri(user))
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(3))
                .build();
    }

    private static String uri(String user) {
        return (SERVER.uri() + "?ttl=" + TTL_SECONDS).replace("etcd://", "etcd://" + user + ":" + user + "-secret@");
    }

    /** @return a bare jetcd client with the user's credentials, for the lease APIs the engine does not offer */
    private static Client jetcd(String user) {
        return Client.builder()
                .endpoints(SERVER.get().endpoint())
                .user(LockKeys.bytes(user))
                .password(LockKeys.bytes(user + "-secret"))
                .build();
    }

    private static <T> T answer(CompletableFuture<T> request) throws Exception {
        return request.get(TestTimes.millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return the server's version, e.g. {@code 3.4.23} */
    private static String serverVersion(Client client) throws Exception {
        return answer(client.getMaintenanceClient()
                        .statusMember(SERVER.get().endpoint().substring("http://".length())))
                .getVersion();
    }

    /** @return the keys of an app A lock (its name URL-encoded), as root reads them */
    private static List<String> keysOf(String encodedName) {
        return SERVER.get()
                .ctl(
                        "--user",
                        "root:r00t-secret",
                        "get",
                        "cerberus/appA/" + encodedName + "/",
                        "--prefix",
                        "--keys-only")
                .lines()
                .filter(line -> !line.isBlank())
                .toList();
    }

    /** @return the client lease a lock key names: {@code <prefix>/<namespace>/<name>/<lease-hex>_<n>} */
    private static long leaseOf(String key) {
        String last = key.substring(key.lastIndexOf('/') + 1);
        return Long.parseUnsignedLong(last.substring(0, last.indexOf('_')), 16);
    }

    /** Sends keep-alives of a lease as app B, every 200 ms until closed. */
    private static ScheduledExecutorService keepAliveAsAppB(Client appB, long leaseId) {
        ScheduledExecutorService keepAlives = Executors.newSingleThreadScheduledExecutor();
        keepAlives.scheduleWithFixedDelay(
                () -> appB.getLeaseClient().keepAliveOnce(leaseId), 0, 200, TimeUnit.MILLISECONDS);
        return keepAlives;
    }

    @Test
    void eachAppLocksAndGuardsInItsOwnNamespaceWithItsOwnRole() throws Exception {
        try (Cerberus a = app("appA", "appA");
                Cerberus b = app("appB", "appB")) {
            DistributedLock lock = a.lock("order:1");
            assertThat(lock.tryLock()).isTrue();
            assertThat(b.lock("order:1").tryLock())
                    .as("same name, other app: another lock")
                    .isTrue();
            b.lock("order:1").unlock();
            assertThat(a.inspect("")).extracting(info -> info.name()).containsExactly("order:1");
            lock.unlock();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-1");
            assertThat(a.idempotency(IdempotencyOptions.defaults())
                            .execute(key, Duration.ofHours(1), () -> "charged")
                            .status())
                    .isEqualTo(Outcome.Status.EXECUTED);
            assertThat(b.idempotency(IdempotencyOptions.defaults())
                            .execute(key, Duration.ofHours(1), () -> "charged")
                            .status())
                    .as("the same key in another app's namespace is another record")
                    .isEqualTo(Outcome.Status.EXECUTED);
        }
    }

    @Test
    void appBsCredentialsCannotReadReleaseOrBlockAppAsLocksAndRecords() throws Exception {
        try (Cerberus a = app("appA", "appA");
                Cerberus intruder = app("appB", "appA")) {
            DistributedLock lock = a.lock("order:2");
            assertThat(lock.tryLock()).isTrue();
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-2");
            a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged");
            try {
                assertThatThrownBy(() -> intruder.lock("order:2").tryLock())
                        .as("taking or blocking")
                        .hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> intruder.lock("order:2").isLocked())
                        .as("reading")
                        .hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> intruder.inspect(""))
                        .as("listing")
                        .hasStackTraceContaining("permission denied");
                assertThatThrownBy(() -> intruder.idempotency(IdempotencyOptions.defaults())
                                .execute(key, Duration.ofHours(1), () -> "again"))
                        .as("reading or claiming A's records")
                        .hasStackTraceContaining("permission denied");
                assertThatThrownBy(() ->
                                SERVER.get().ctl("--user", "appB:appB-secret", "get", "cerberus/appA/", "--prefix"))
                        .as("B's etcdctl may not read A's keys")
                        .hasMessageContaining("permission denied");
                assertThatThrownBy(() ->
                                SERVER.get().ctl("--user", "appB:appB-secret", "del", "cerberus/appA/", "--prefix"))
                        .as("nor delete them")
                        .hasMessageContaining("permission denied");
            } finally {
                assertThat(lock.lease().isValid()).as("A's lock is untouched").isTrue();
                lock.unlock();
            }
            assertThat(a.idempotency(IdempotencyOptions.defaults())
                            .execute(key, Duration.ofHours(1), () -> "again")
                            .status())
                    .as("A's record is untouched")
                    .isEqualTo(Outcome.Status.REPLAYED);
        }
    }

    @Test
    void appBCannotRevokeAppAsLeaseNorDeleteItsKeys() throws Exception {
        try (Cerberus a = app("appA", "appA");
                Client appB = jetcd("appB")) {
            DistributedLock lock = a.lock("order:3");
            assertThat(lock.tryLock()).isTrue();
            String key = keysOf("order%3A3").get(0);
            long leaseId = leaseOf(key);
            assertThatThrownBy(() -> answer(appB.getLeaseClient().revoke(leaseId)))
                    .as("revoking needs write permission on every key of the lease")
                    .hasStackTraceContaining("permission denied");
            assertThatThrownBy(() -> SERVER.get()
                            .ctl("--user", "appB:appB-secret", "lease", "revoke", Long.toHexString(leaseId)))
                    .hasMessageContaining("permission denied");
            assertThatThrownBy(() -> answer(appB.getKVClient().delete(LockKeys.bytes(key))))
                    .as("deleting the key by its exact name")
                    .hasStackTraceContaining("permission denied");
            assertThat(keysOf("order%3A3")).as("A's key is still there").containsExactly(key);
            assertThat(lock.lease().isValid()).isTrue();
            lock.unlock();
        }
    }

    @Test
    void appBListsAppAsLeaseIdsAndReadsItsKeyNamesOnlyOnServersBeforeTheFix() throws Exception {
        try (Cerberus a = app("appA", "appA");
                Client appB = jetcd("appB")) {
            DistributedLock lock = a.lock("order:4");
            assertThat(lock.tryLock()).isTrue();
            String key = keysOf("order%3A4").get(0);
            long leaseId = leaseOf(key);
            assertThat(SERVER.get().ctl("--user", "appB:appB-secret", "lease", "list"))
                    .as("lease ids are listed to every user")
                    .contains(Long.toHexString(leaseId));
            String version = serverVersion(appB);
            CompletableFuture<List<String>> attached = appB.getLeaseClient()
                    .timeToLive(
                            leaseId, LeaseOption.builder().withAttachedKeys().build())
                    .thenApply(reply -> reply.getKeys().stream()
                            .map(name -> name.toString(StandardCharsets.UTF_8))
                            .toList());
            if (KeyNameExposure.exposesKeyNames(version)) {
                assertThat(answer(attached))
                        .as("etcd %s shows A's key names to B (CVE-2023-32082)", version)
                        .contains(key);
            } else {
                assertThatThrownBy(() -> answer(attached))
                        .as("etcd %s checks read permission on the keys", version)
                        .hasStackTraceContaining("permission denied");
            }
            lock.unlock();
        }
    }

    @Test
    void appBsKeepAlivesOfAppAsLeaseDoNotKeepItsHoldPastTheHoldsOwnLease() throws Exception {
        try (Cerberus a = app("appA", "appA");
                Client appB = jetcd("appB")) {
            Lease hold = a.lock("order:5").acquire(Duration.ZERO, Duration.ofSeconds(1));
            long leaseId = leaseOf(keysOf("order%3A5").get(0));
            assertThat(answer(appB.getLeaseClient().keepAliveOnce(leaseId)).getTTL())
                    .as("etcd lets any user keep any lease alive")
                    .isPositive();
            ScheduledExecutorService keepAlives = keepAliveAsAppB(appB, leaseId);
            try {
                Poll.until(
                        "A's hold to end with its own 1 s lease",
                        TestTimes.millis(4_000),
                        () -> !a.lock("order:5").isLocked());
                assertThat(keysOf("order%3A5")).as("the engine deleted the key").isEmpty();
                assertThat(answer(appB.getLeaseClient().timeToLive(leaseId, LeaseOption.DEFAULT))
                                .getTTL())
                        .as("while A's client lease lives on")
                        .isPositive();
                assertThat(hold.isValid()).isFalse();
            } finally {
                keepAlives.shutdownNow();
            }
        }
    }

    /**
     * The engine ends a hold at the end of the hold's lease from the holder's process; a process
     * that is gone leaves its keys to its client lease, which any user can keep alive. Documented
     * (docs/ETCD.md, "Tenancy"): nothing in etcd keeps another user from doing so.
     */
    @Test
    void aCrashedHoldersLockStaysTakenWhileAppBKeepsItsClientLeaseAlive() throws Exception {
        try (Cerberus a = app("appA", "appA");
                Client appB = jetcd("appB");
                ManagedProcess holder = ClientProcess.start(uri("appA"), "appA", Duration.ofSeconds(1))) {
            ClientProcess.lock(holder, "exclusive", "order:6");
            long leaseId = leaseOf(keysOf("order%3A6").get(0));
            ScheduledExecutorService keepAlives = keepAliveAsAppB(appB, leaseId);
            try {
                holder.kill(TestTimes.millis(10_000));
                // watched for two client lease TTLs and a second: without B the key would be gone within one TTL
                long watchUntil = System.nanoTime()
                        + Duration.ofSeconds(2L * TTL_SECONDS + 1).toNanos();
                while (System.nanoTime() - watchUntil < 0) {
                    assertThat(a.lock("order:6").tryLock())
                            .as("the crashed holder's key stays while B keeps its lease alive")
                            .isFalse();
                    Thread.sleep(200);
                }
            } finally {
                keepAlives.shutdownNow();
            }
            Poll.until(
                    "the key to go with the client lease once B stops",
                    Duration.ofSeconds(TTL_SECONDS).plus(TestTimes.millis(3_000)),
                    () -> !a.lock("order:6").isLocked());
        }
    }

    @Test
    void aClientWithCredentialsIsWarnedWhenTheServerShowsKeyNamesToOtherUsers() throws Exception {
        String version;
        try (Client appB = jetcd("appB")) {
            version = serverVersion(appB);
        }
        // a URI of its own, so a late line from another test's client is not taken for this one's
        String engine = uri("appA") + "&tls=false";
        try (CapturedLogs log = CapturedLogs.of(KeyNameExposure.class.getName(), Level.ALL)) {
            Cerberus a = Cerberus.builder()
                    .engine(engine)
                    .namespace("appA")
                    .connectTimeout(Duration.ofSeconds(3))
                    .build();
            try {
                awaitVersionsRead(log, "?ttl=" + TTL_SECONDS + "&tls=false");
            } finally {
                a.close();
            }
            List<String> warnings = about(log.messages(Level.WARNING), "?ttl=" + TTL_SECONDS + "&tls=false");
            if (KeyNameExposure.exposesKeyNames(version)) {
                assertThat(warnings)
                        .as("etcd %s", version)
                        .singleElement()
                        .asString()
                        .contains("runs etcd " + version)
                        .contains("3.4.26 or 3.5.9")
                        .contains("etcd://****@127.0.0.1")
                        .doesNotContain("appA-secret");
            } else {
                assertThat(warnings).as("etcd %s", version).isEmpty();
            }
        }
    }

    @Test
    void aClientWithoutCredentialsIsNotWarned() {
        String engine = SERVER.uri() + "?ttl=" + TTL_SECONDS;
        try (CapturedLogs log = CapturedLogs.of(KeyNameExposure.class.getName(), Level.ALL)) {
            Cerberus anonymous = Cerberus.builder()
                    .engine(engine)
                    .namespace("public")
                    .connectTimeout(Duration.ofSeconds(3))
                    .build();
            try {
                awaitVersionsRead(log, engine);
            } finally {
                anonymous.close();
            }
            assertThat(about(log.messages(Level.FINE), engine))
                    .as("the versions were read")
                    .anyMatch(message -> message.contains("=3."));
            assertThat(about(log.messages(Level.WARNING), engine)).isEmpty();
        }
    }

    /** Waits for the line the version check logs last, after any warning. */
    private static void awaitVersionsRead(CapturedLogs log, String engine) {
        Poll.until(
                "the member versions to be read",
                TestTimes.millis(10_000),
                () -> about(log.messages(Level.FINE), engine).stream()
                        .anyMatch(message -> message.contains("member versions")));
    }

    /** @return the messages that name the engine URI (as logged: a password, and a user with it, shown as ****) */
    private static List<String> about(List<String> messages, String engine) {
        return messages.stream().filter(message -> message.contains(engine)).toList();
    }
}
