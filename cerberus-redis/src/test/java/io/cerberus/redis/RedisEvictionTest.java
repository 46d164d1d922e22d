package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.CerberusBuilder;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.LockLostException;
import io.cerberus.UnsafeEngineException;
import io.cerberus.idempotency.IdempotencyAttempt;
import io.cerberus.idempotency.IdempotencyCompletionException;
import io.cerberus.idempotency.IdempotencyGuard;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.IdempotencyStoreUnavailableException;
import io.cerberus.idempotency.ResultCodec;
import io.cerberus.servers.RespQuery;
import io.cerberus.spi.LockKey;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.TestTimes;
import io.lettuce.core.AclCategory;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Eviction on a real redis-server: a server whose {@code maxmemory-policy} may delete the engine's
 * keys is refused at connect unless accepted, read again by the health check, and an evicted
 * hold or claim is reported, never silently kept. Each test starts its own server, set up as it needs.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisEvictionTest {
    private static final String LOGGER = EvictionCheck.class.getName();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private final String namespace = "eviction-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void cleanUp() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private RedisWithAdmin server(String... args) {
        RedisWithAdmin server = RedisWithAdmin.start(args);
        closeAfter.add(server);
        return server;
    }

    private Cerberus client(String uri) {
        return client(uri, null, Duration.ofSeconds(30));
    }

    private Cerberus client(String uri, RedisOptions options, Duration lease) {
        CerberusBuilder builder =
                Cerberus.builder().namespace(namespace).defaultLease(lease).connectTimeout(Duration.ofSeconds(5));
        Cerberus cerberus = (options == null ? builder.engine(uri) : builder.engine(uri, options)).build();
        closeAfter.add(cerberus);
        return cerberus;
    }

    private static List<String> checkHealth(Cerberus cerberus) {
        return cerberus.checkEngine(cerberus.engines().get(0));
    }

    /** Writes keys with a TTL of an hour, 2 KB each, until Redis has evicted {@code key}. */
    private static int fillUntilEvicted(RedisWithAdmin server, String key) {
        RedisCommands<String, String> admin = server.admin();
        String value = "x".repeat(2048);
        SetArgs anHour = SetArgs.Builder.px(3_600_000);
        long deadline = System.nanoTime() + TestTimes.millis(30_000).toNanos();
        int written = 0;
        while (admin.exists(key) == 1) {
            assertThat(System.nanoTime() - deadline)
                    .as("%s evicted within 30 s (%d keys written)", key, written)
                    .isNegative();
            for (int i = 0; i < 100; i++) {
                admin.set("filler:" + written++, value, anHour);
            }
        }
        return written;
    }

    // ---- at connect ----------------------------------------------------------------------------

    @Test
    void aServerThatMayEvictIsRefusedAtConnectNamingThePolicyAndTheWaysOut() {
        RedisWithAdmin server = server("--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru");
        assertThatThrownBy(() -> client(server.uri()))
                .isInstanceOf(UnsafeEngineException.class)
                .hasMessageContaining("redis engine " + server.uri())
                .hasMessageContaining("maxmemory-policy volatile-lru with maxmemory 4194304 bytes")
                .hasMessageContaining("two holders")
                .hasMessageContaining("run twice")
                .hasMessageContaining("maxmemory-policy noeviction")
                .hasMessageContaining("acceptEviction=true")
                .hasMessageContaining("RedisOptions.builder().acceptEviction(true)");
        assertThatThrownBy(() -> client(
                        server.uri() + "?acceptEviction=true",
                        RedisOptions.builder().acceptEviction(false).build(),
                        Duration.ofSeconds(30)))
                .as("the options override the URI")
                .isInstanceOf(UnsafeEngineException.class);
    }

    @Test
    void theDefaultServerRunsNoevictionAndOpensWithoutAWarningAfterReadingIt() {
        RedisWithAdmin server = server();
        RedisCommands<String, String> admin = server.admin();
        assertThat(admin.configGet("maxmemory-policy")).containsEntry("maxmemory-policy", "noeviction");
        assertThat(admin.configGet("maxmemory")).containsEntry("maxmemory", "0");
        admin.configResetstat();
        try (CapturedLogs logs = CapturedLogs.of(LOGGER, Level.ALL)) {
            Cerberus cerberus = client(server.uri());
            // commandstats counts the INFO that reads them after it answers: what is counted is the engine's
            assertThat(server.commandCalls())
                    .as("the engine read the policy once, with INFO")
                    .containsEntry("info", 1L)
                    .doesNotContainKey("config|get");
            assertThat(checkHealth(cerberus)).isEmpty();
            assertThat(server.commandCalls())
                    .as("the health check read it again")
                    .containsEntry("info", 3L);
            assertThat(logs.lines()).isEmpty();
        }
    }

    @Test
    void acceptEvictionOpensWithAWarningLoggedOnceAndShownByEveryHealthCheck() {
        RedisWithAdmin server = server("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru");
        try (CapturedLogs logs = CapturedLogs.of(LOGGER, Level.ALL)) {
            Cerberus viaUri = client(server.uri() + "?acceptEviction=true");
            Cerberus viaOptions = client(
                    server.uri(), RedisOptions.builder().acceptEviction(true).build(), Duration.ofSeconds(30));
            assertThat(logs.messages(Level.WARNING))
                    .hasSize(2)
                    .allSatisfy(warning -> assertThat(warning)
                            .contains("maxmemory-policy allkeys-lru with maxmemory 67108864 bytes")
                            .contains("accepted with acceptEviction=true"));
            for (Cerberus cerberus : List.of(viaUri, viaOptions)) {
                assertThat(checkHealth(cerberus))
                        .singleElement()
                        .asString()
                        .contains("allkeys-lru")
                        .contains("acceptEviction=true");
                assertThat(checkHealth(cerberus)).hasSize(1);
            }
            assertThat(logs.lines())
                    .as("nothing changed since the open: nothing more logged")
                    .hasSize(2);
        }
    }

    @Test
    void aPolicyThatMayEvictWithoutMaxmemoryOpensWithAHealthWarning() {
        RedisWithAdmin server = server("--maxmemory-policy", "volatile-ttl");
        Cerberus cerberus = client(server.uri());
        assertThat(checkHealth(cerberus))
                .singleElement()
                .asString()
                .contains("volatile-ttl with maxmemory 0")
                .contains("CONFIG SET maxmemory");
    }

    @Test
    void aBadAcceptEvictionValueIsRefusedByName() {
        assertThatThrownBy(() -> Cerberus.connect("redis://127.0.0.1:1?acceptEviction=yes"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("acceptEviction")
                .hasMessageContaining("true or false");
    }

    // ---- policies that cannot be read ----------------------------------------------------------

    @Test
    void aPolicyNoCommandMayReadIsAWarningNotARefusal() {
        RedisWithAdmin server = server("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru");
        // INFO and CONFIG are both @dangerous
        server.admin()
                .aclSetuser(
                        "app",
                        AclSetuserArgs.Builder.on()
                                .addPassword("app-secret")
                                .allKeys()
                                .allChannels()
                                .allCommands()
                                .removeCategory(AclCategory.DANGEROUS));
        try (CapturedLogs logs = CapturedLogs.of(LOGGER, Level.ALL)) {
            Cerberus cerberus = client("redis://app:app-secret@127.0.0.1:" + server.port());
            assertThat(logs.messages(Level.WARNING))
                    .singleElement()
                    .asString()
                    .contains("could not read the eviction policy")
                    .contains("NOPERM")
                    .contains("+info");
            assertThat(checkHealth(cerberus)).singleElement().asString().contains("could not read the eviction policy");
            assertThat(logs.lines()).as("logged once, at open").hasSize(1);
        }
    }

    @Test
    void whereInfoIsRefusedConfigGetReadsThePolicy() {
        RedisWithAdmin server = server("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru");
        server.admin()
                .aclSetuser(
                        "app",
                        AclSetuserArgs.Builder.on()
                                .addPassword("app-secret")
                                .allKeys()
                                .allChannels()
                                .allCommands()
                                .removeCategory(AclCategory.DANGEROUS));
        RespQuery.send(server.port(), "ACL", "SETUSER", "app", "+config|get");
        assertThatThrownBy(() -> client("redis://app:app-secret@127.0.0.1:" + server.port()))
                .isInstanceOf(UnsafeEngineException.class)
                .hasMessageContaining("allkeys-lru");
    }

    // ---- at the health check -------------------------------------------------------------------

    @Test
    void aPolicyThatMayEvictSetAfterOpenFailsTheHealthCheckAndIsLoggedOnce() {
        RedisWithAdmin server = server();
        Cerberus strict = client(server.uri());
        Cerberus accepting = client(server.uri() + "?acceptEviction=true");
        assertThat(checkHealth(strict)).isEmpty();
        assertThat(checkHealth(accepting)).isEmpty();
        server.admin().configSet(Map.of("maxmemory-policy", "allkeys-lru", "maxmemory", "64mb"));
        try (CapturedLogs logs = CapturedLogs.of(LOGGER, Level.ALL)) {
            for (int check = 0; check < 2; check++) {
                assertThatThrownBy(() -> checkHealth(strict))
                        .isInstanceOf(UnsafeEngineException.class)
                        .hasMessageContaining("no longer safe")
                        .hasMessageContaining("allkeys-lru")
                        .hasMessageContaining("acceptEviction");
            }
            assertThat(logs.messages(Level.SEVERE))
                    .as("the refusal, logged once for two checks")
                    .hasSize(1);
            assertThat(checkHealth(accepting))
                    .singleElement()
                    .asString()
                    .contains("allkeys-lru")
                    .contains("accepted");
            server.admin().configSet(Map.of("maxmemory-policy", "noeviction"));
            assertThat(checkHealth(strict)).as("safe again").isEmpty();
            assertThat(logs.messages(Level.INFO))
                    .as("the return to noeviction, logged")
                    .hasSize(1);
        }
    }

    // ---- what eviction does when accepted ------------------------------------------------------

    @Test
    void anEvictedHoldIsReportedLostAndTheNextHoldersFenceIsLarger() throws Exception {
        RedisWithAdmin server = server("--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru");
        Duration lease = Duration.ofSeconds(6);
        Cerberus holder = client(server.uri() + "?acceptEviction=true", null, lease);
        Cerberus other = client(server.uri() + "?acceptEviction=true", null, lease);
        Lease first = holder.lock("evicted").acquire(Duration.ZERO);
        CountDownLatch lost = new CountDownLatch(1);
        first.onLost((gone, why) -> lost.countDown());
        int written = fillUntilEvicted(
                server, LockKeys.of(new LockKey(namespace, "evicted")).owner());
        System.out.printf("the owner key was evicted after %d keys of 2 KB%n", written);
        // the server no longer has the hold: another client is granted it at once, while the first still believes it
        // holds
        Lease second = other.lock("evicted").acquire(Duration.ZERO);
        assertThat(second.fencingToken()).as("the next holder's fencing token").isGreaterThan(first.fencingToken());
        assertThat(lost.await(lease.plus(TestTimes.millis(5000)).toMillis(), TimeUnit.MILLISECONDS))
                .as("the first holder is told, at its next renewal")
                .isTrue();
        assertThat(first.isValid()).isFalse();
        assertThatThrownBy(first::close).isInstanceOf(LockLostException.class);
        assertThat(second.isValid()).isTrue();
        second.close();
    }

    @Test
    void anEvictedClaimMakesItsCompletionFail() throws Exception {
        RedisWithAdmin server = server("--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru");
        Cerberus cerberus = client(server.uri() + "?acceptEviction=true");
        IdempotencyGuard guard = cerberus.idempotency(IdempotencyOptions.defaults());
        IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-7");
        IdempotencyAttempt<String> attempt = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING);
        assertThat(attempt.mustRun()).isTrue();
        fillUntilEvicted(server, RedisIdempotencyStore.key(cerberus.namespace() + "/" + key.id()));
        IdempotencyAttempt<String> duplicate = guard.begin(key, Duration.ofHours(1), ResultCodec.STRING);
        assertThat(duplicate.mustRun())
                .as("with the claim evicted, a duplicate runs the operation too")
                .isTrue();
        assertThatThrownBy(() -> attempt.complete("charged"))
                .as("the first attempt learns it when it completes")
                .isInstanceOf(IdempotencyCompletionException.class)
                .hasMessageContaining("its result was not stored");
        duplicate.complete("charged again");
    }

    // ---- a full server under noeviction --------------------------------------------------------

    @Test
    void aFullServerUnderNoevictionRefusesGrantsAndClaimsInsteadOfEvicting() throws Exception {
        RedisWithAdmin server = server("--maxmemory", "4mb");
        Cerberus cerberus = client(server.uri());
        assertThat(checkHealth(cerberus)).isEmpty();
        RedisCommands<String, String> admin = server.admin();
        String value = "x".repeat(2048);
        assertThatThrownBy(() -> {
                    for (int i = 0; i < 1_000_000; i++) {
                        admin.set("filler:" + i, value);
                    }
                })
                .isInstanceOf(RedisCommandExecutionException.class)
                .hasMessageContaining("OOM");
        // the fill stops at the limit, where freed buffers may bring the server back under it; a lower limit keeps it
        // over
        admin.configSet("maxmemory", "2mb");
        assertThatThrownBy(() -> cerberus.lock("full").tryLock())
                .isInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("OOM");
        IdempotencyGuard guard =
                cerberus.idempotency(IdempotencyOptions.defaults().withStoreAttempts(1));
        assertThatThrownBy(() ->
                        guard.execute(IdempotencyKey.ofContent("charge", "full"), Duration.ofHours(1), () -> "charged"))
                .isInstanceOf(IdempotencyStoreUnavailableException.class)
                .rootCause()
                .hasMessageContaining("OOM");
    }
}
