package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.CerberusException;
import io.cerberus.DistributedLock;
import io.cerberus.Lease;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Per-application isolation enforced by Redis itself: an ACL user per application, allowed only
 * the keys and channels of its namespace ({@code cerberus:{NS:*}}). App B's credentials cannot read,
 * release or block app A's locks.
 */
class RedisAclIsolationTest {
    private static RedisWithAdmin server;

    @BeforeAll
    static void start() {
        server = RedisWithAdmin.start();
        for (String app : new String[] {"appA", "appB"}) {
            server.admin().aclSetuser(app, io.lettuce.core.AclSetuserArgs.Builder.on()
                    .addPassword(app + "-secret")
                    .resetKeys().keyPattern("cerberus:{" + app + ":*")
                    .resetChannels().channelPattern("cerberus:{" + app + ":*")
                    .addCommand(io.lettuce.core.protocol.CommandType.PING)
                    .addCommand(io.lettuce.core.protocol.CommandType.TIME)
                    .addCategory(io.lettuce.core.AclCategory.SCRIPTING)
                    .addCategory(io.lettuce.core.AclCategory.PUBSUB)
                    .addCategory(io.lettuce.core.AclCategory.CONNECTION)
                    .addCategory(io.lettuce.core.AclCategory.KEYSPACE)
                    .addCategory(io.lettuce.core.AclCategory.READ)
                    .addCategory(io.lettuce.core.AclCategory.WRITE)
                    .removeCategory(io.lettuce.core.AclCategory.DANGEROUS)
                    // INFO is @dangerous: allowed again so the engine can read the eviction policy
                    .addCommand(io.lettuce.core.protocol.CommandType.INFO)
                    // SCAN and RANDOMKEY ignore key patterns: they would list other applications' lock names
                    .removeCommand(io.lettuce.core.protocol.CommandType.SCAN)
                    .removeCommand(io.lettuce.core.protocol.CommandType.RANDOMKEY));
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static Cerberus app(String user, String namespace) {
        return Cerberus.builder()
                .engine("redis://" + user + ":" + user + "-secret@127.0.0.1:" + server.port())
                .namespace(namespace)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    private static RedisCommands<String, String> raw(RedisClient client) {
        StatefulRedisConnection<String, String> connection = client.connect();
        return connection.sync();
    }

    @Test
    void eachAppLocksInItsOwnNamespaceWithItsOwnUser() throws Exception {
        try (Cerberus a = app("appA", "appA"); Cerberus b = app("appB", "appB")) {
            try (Lease lease = a.lock("order:1").acquire(Duration.ofSeconds(1))) {
                assertThat(b.lock("order:1").tryLock()).as("same name, other app: another lock").isTrue();
                b.lock("order:1").unlock();
                assertThatThrownBy(() -> a.inspect("")).as("inspect needs SCAN, which the application's user may not run")
                        .isInstanceOf(CerberusException.class).hasMessageContaining("NOPERM");
                try (Cerberus operator = Cerberus.builder().engine(server.uri()).namespace("appA").build()) {
                    assertThat(operator.inspect("")).as("an operator's user lists them").extracting(info -> info.name())
                            .containsExactly("order:1");
                }
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    @Test
    void theApplicationsUserMayReadTheEvictionPolicy() {
        try (Cerberus a = app("appA", "appA")) {
            assertThat(a.checkEngine(a.engines().get(0))).as("no warning: INFO memory was allowed and read").isEmpty();
        }
    }

    @Test
    void appBsCredentialsCannotReadReleaseOrBlockAppAsLocks() throws Exception {
        try (Cerberus a = app("appA", "appA"); Cerberus intruder = app("appB", "appA")) {
            DistributedLock lock = a.lock("order:2");
            assertThat(lock.tryLock()).isTrue();
            try {
                assertThatThrownBy(() -> intruder.lock("order:2").tryLock())
                        .as("blocking or taking: B may not touch A's keys")
                        .isInstanceOf(CerberusException.class).hasMessageContaining("NOPERM");
                assertThatThrownBy(() -> intruder.lock("order:2").isLocked())
                        .isInstanceOf(CerberusException.class).hasMessageContaining("NOPERM");

                RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(server.port())
                        .withAuthentication("appB", "appB-secret".toCharArray()).build());
                try {
                    RedisCommands<String, String> b = raw(client);
                    String owner = "cerberus:{appA:order%3A2}:owner";
                    assertThatThrownBy(() -> b.hgetall(owner)).isInstanceOf(RedisCommandExecutionException.class)
                            .hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> b.del(owner)).isInstanceOf(RedisCommandExecutionException.class)
                            .hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> b.pexpire(owner, 3_600_000)).as("extending A's hold")
                            .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> b.eval("return redis.call('DEL', KEYS[1])", ScriptOutputType.INTEGER, owner))
                            .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> b.publish("cerberus:{appA:order%3A2}:changed", "x"))
                            .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> b.scan()).as("listing every key, A's lock names too")
                            .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> b.randomkey()).isInstanceOf(RedisCommandExecutionException.class)
                            .hasMessageContaining("NOPERM");
                } finally {
                    client.shutdown();
                }
                assertThat(lock.isLocked()).as("A's lock is untouched").isTrue();
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void eachAppsIdempotencyRecordsAreItsOwn() throws Exception {
        try (Cerberus a = app("appA", "appA"); Cerberus intruder = app("appB", "appA")) {
            IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-9");
            Outcome<String> first = a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged");
            assertThat(first.status()).as("an app's user may use the guard in its namespace").isEqualTo(Outcome.Status.EXECUTED);
            assertThatThrownBy(() -> intruder.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "again"))
                    .as("B may not read or claim A's records").hasStackTraceContaining("NOPERM");
            RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(server.port())
                    .withAuthentication("appB", "appB-secret".toCharArray()).build());
            try {
                String record = RedisIdempotencyStore.key("appA/" + key.id());
                assertThatThrownBy(() -> raw(client).del(record)).isInstanceOf(RedisCommandExecutionException.class)
                        .hasMessageContaining("NOPERM");
            } finally {
                client.shutdown();
            }
            assertThat(a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "again").status())
                    .isEqualTo(Outcome.Status.REPLAYED);
        }
    }
}
