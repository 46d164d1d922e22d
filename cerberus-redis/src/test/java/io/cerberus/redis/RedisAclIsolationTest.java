package io.cerberus.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cerberus.Cerberus;
import io.cerberus.CerberusException;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.Lease;
import io.cerberus.idempotency.IdempotencyKey;
import io.cerberus.idempotency.IdempotencyOptions;
import io.cerberus.idempotency.Outcome;
import io.cerberus.servers.Await;
import io.cerberus.servers.RedisCluster;
import io.cerberus.servers.RedisGroup;
import io.cerberus.servers.RedisSentinel;
import io.cerberus.servers.RedisServer;
import io.cerberus.servers.RespQuery;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.testkit.Engines;
import io.cerberus.testkit.ServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-application isolation enforced by Redis itself, with the ACL lines of docs/REDIS.md ("One ACL
 * user per application"), read from that page and applied as written: a user per application,
 * allowed only the keys and channels of its namespace ({@code cerberus:{NS:*}}) and only the
 * commands the engine sends. On each deployment shape (one server, Sentinel, Cluster, Redlock) both
 * applications' engines lock, wait, are woken and guard operations under their users; application
 * B's credentials cannot read, release, extend or block A's locks, and every server-wide command
 * the recipe denies (they would list A's lock names, or wipe what every application shares) is
 * refused to B on every data server, and on every Sentinel all but the master's address.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisAclIsolationTest {
    // shared, not per class: JUnit runs a class's extensions again for each @Nested class, and
    // per-class servers would be started once for each and only the last ones stopped
    @RegisterExtension
    static final ServerExtension<RedisServer> SERVER = ServerExtension.shared("redis-acl-server", RedisServer::start);

    @RegisterExtension
    static final ServerExtension<RedisSentinel> SENTINEL = ServerExtension.shared(
            "redis-acl-sentinel", () -> RedisSentinel.builder().sentinels(1).start());

    @RegisterExtension
    static final ServerExtension<RedisCluster> CLUSTER = RedisClusterTest.sharedCluster();

    @RegisterExtension
    static final ServerExtension<RedisGroup> REDLOCK =
            ServerExtension.shared("redis-acl-redlock", () -> RedisGroup.start(3));

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final String PROBE_LIBRARY = "cerberus_acl_probe";

    /** @return the ACL line of docs/REDIS.md that contains {@code marker}, for the application {@code app} */
    static List<String> recipe(String marker, String app) {
        Path page = Path.of("").toAbsolutePath();
        while (page != null && !Files.exists(page.resolve("docs/REDIS.md"))) {
            page = page.getParent();
        }
        assertThat(page).as("docs/REDIS.md above the working directory").isNotNull();
        List<String> lines;
        try {
            lines = Files.readAllLines(page.resolve("docs/REDIS.md"), StandardCharsets.UTF_8).stream()
                    .filter(line -> line.startsWith("ACL SETUSER billing ") && line.contains(marker))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(lines).as("one ACL line with %s in docs/REDIS.md", marker).hasSize(1);
        List<String> words = new ArrayList<>();
        for (String word : lines.get(0).split(" ")) {
            words.add(word.replace("billing", app).replace("PASSWORD", password(app)));
        }
        return words;
    }

    static String password(String app) {
        return app + "-secret";
    }

    /** Runs {@code ACL SETUSER ...} as the server's administrator (the default user, no password here). */
    static void setUser(int port, List<String> acl) {
        assertThat(RespQuery.send(port, acl.toArray(new String[0])))
                .as("ACL %s on port %d", acl, port)
                .containsExactly("OK");
    }

    /** A command of any name, for the probes: most have no method of their own in Lettuce. */
    private record Keyword(String word) implements ProtocolKeyword {
        @Override
        public byte[] getBytes() {
            return word.getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        public String toString() {
            return word;
        }
    }

    /** Sends a command as it is written ("PUBSUB CHANNELS"): the words, then {@code more}. */
    static Object send(RedisCommands<String, String> commands, String command, String... more) {
        String[] words = command.split(" ");
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
        for (String word : Arrays.copyOfRange(words, 1, words.length)) {
            args.add(word);
        }
        for (String word : more) {
            args.add(word);
        }
        return commands.dispatch(new Keyword(words[0]), new NestedMultiOutput<>(StringCodec.UTF8), args);
    }

    static RedisClient client(int port, String user) {
        return RedisClient.create(RedisURI.builder()
                .withHost("127.0.0.1")
                .withPort(port)
                .withTimeout(TIMEOUT)
                .withAuthentication(user, password(user).toCharArray())
                .build());
    }

    @Nested
    class OneServer extends Isolation {
        @Override
        String uri() {
            return SERVER.uri();
        }

        @Override
        List<Integer> dataPorts() {
            return List.of(SERVER.get().port());
        }

        @Test
        void theApplicationsUserMayReadTheEvictionPolicy() {
            try (Cerberus a = app("appA", "appA")) {
                assertThat(a.checkEngine(a.engines().get(0)))
                        .as("no warning: INFO memory was allowed and read")
                        .isEmpty();
            }
        }

        @Test
        void withoutInfoTheEngineOpensAndWarnsThatThePolicyIsUnreadable() throws Exception {
            List<String> acl = new ArrayList<>(recipe("resetkeys", "appC"));
            acl.add("-info");
            setUser(SERVER.get().port(), acl);
            try (Cerberus c = app("appC", "appC")) {
                assertThat(c.checkEngine(c.engines().get(0)))
                        .as("INFO refused, CONFIG GET refused: a warning, not a refusal")
                        .singleElement()
                        .asString()
                        .contains("could not read the eviction policy")
                        .contains("NOPERM");
                try (Lease lease = c.lock("order:" + UUID.randomUUID()).acquire(TIMEOUT)) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
        }

        @Test
        void inspectNeedsAnOperatorsUser() throws Exception {
            try (Cerberus a = app("appA", "appA");
                    Lease lease = a.lock("inspected").acquire(TIMEOUT)) {
                assertThatThrownBy(() -> a.inspect("inspected"))
                        .as("inspect needs SCAN, which the application's user may not run")
                        .isInstanceOf(CerberusException.class)
                        .hasMessageContaining("NOPERM");
                try (Cerberus operator = Cerberus.builder()
                        .engine(SERVER.uri())
                        .namespace("appA")
                        .build()) {
                    assertThat(operator.inspect("inspected"))
                            .as("an operator's user lists them")
                            .extracting(info -> info.name())
                            .containsExactly("inspected");
                }
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    @Nested
    class Sentinel extends Isolation {
        @Override
        String uri() {
            return SENTINEL.uri();
        }

        @Override
        List<Integer> dataPorts() {
            return SENTINEL.get().nodes().stream().map(RedisServer::port).toList();
        }

        @Override
        List<Integer> sentinelPorts() {
            return SENTINEL.get().sentinels().stream().map(RedisServer::port).toList();
        }

        @Test
        void onTheSentinelsBMayOnlyAskWhereTheMasterIs() {
            String master = SENTINEL.get().masterName();
            SoftAssertions refused = new SoftAssertions();
            for (int port : sentinelPorts()) {
                RedisClient client = client(port, "appB");
                try (StatefulRedisConnection<String, String> connection = client.connect()) {
                    RedisCommands<String, String> b = connection.sync();
                    assertThat(send(b, "SENTINEL GET-MASTER-ADDR-BY-NAME", master))
                            .as("what the engine asks")
                            .isEqualTo(List.of(
                                    "127.0.0.1",
                                    Integer.toString(SENTINEL.get().primary().port())));
                    for (String command : List.of(
                            "SENTINEL FAILOVER " + master,
                            "SENTINEL SET " + master + " quorum 5",
                            "SENTINEL REMOVE " + master,
                            "SENTINEL RESET *",
                            "SENTINEL MONITOR other 127.0.0.1 1 1",
                            "SENTINEL CONFIG SET resolve-hostnames yes",
                            "SENTINEL MASTERS",
                            "SENTINEL MASTER " + master,
                            "SENTINEL REPLICAS " + master,
                            "SENTINEL SENTINELS " + master,
                            "INFO",
                            "ACL LIST",
                            "CLIENT LIST",
                            "SUBSCRIBE +switch-master")) {
                        refused.assertThatThrownBy(() -> send(b, command))
                                .as("B on Sentinel %d: %s", port, command)
                                .isInstanceOf(RedisCommandExecutionException.class)
                                .hasMessageContaining("NOPERM");
                    }
                } finally {
                    client.shutdown();
                }
            }
            refused.assertAll();
        }
    }

    @Nested
    class Cluster extends Isolation {
        @Override
        String uri() {
            return CLUSTER.uri();
        }

        @Override
        List<Integer> dataPorts() {
            return CLUSTER.get().nodes().stream().map(RedisServer::port).toList();
        }
    }

    @Nested
    class Redlock extends Isolation {
        @Override
        String uri() {
            return REDLOCK.uri();
        }

        @Override
        List<Integer> dataPorts() {
            return REDLOCK.get().nodes().stream().map(RedisServer::port).toList();
        }

        @Override
        boolean keepsRecords() {
            return false;
        }
    }

    /** The isolation cases, for one deployment shape. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class Isolation {
        /** Server-wide commands the recipe denies, each refused to B on every data server. */
        private static final List<String> DENIED = List.of(
                "PUBSUB CHANNELS",
                "PUBSUB CHANNELS cerberus:*",
                "PUBSUB NUMSUB",
                "PUBSUB NUMPAT",
                "PUBSUB SHARDCHANNELS",
                "DBSIZE",
                "KEYS *",
                "SCAN 0",
                "RANDOMKEY",
                "CLIENT TRACKING ON BCAST",
                "CLIENT LIST",
                "CLIENT KILL TYPE normal",
                "SCRIPT FLUSH",
                "SCRIPT KILL",
                "SCRIPT LOAD",
                "SCRIPT EXISTS",
                "FUNCTION FLUSH",
                "FUNCTION DELETE " + PROBE_LIBRARY,
                "FUNCTION LIST",
                "FUNCTION DUMP",
                "FUNCTION STATS",
                "FUNCTION KILL",
                "FUNCTION LOAD",
                "FUNCTION RESTORE x",
                "FCALL probe 0",
                "FCALL_RO probe 0",
                "CONFIG GET maxmemory-policy",
                "CONFIG SET maxmemory-policy allkeys-lru",
                "FLUSHALL",
                "FLUSHDB",
                "SWAPDB 0 1",
                "SLOWLOG GET",
                "ACL LIST",
                "CLUSTER GETKEYSINSLOT 0 10",
                "BLPOP cerberus:{appB:list} 0.01",
                "MONITOR");

        /** @return the deployment's engine URI, without credentials */
        abstract String uri();

        /** @return every server that keeps keys: replicas too */
        abstract List<Integer> dataPorts();

        /** @return every Sentinel, if any */
        List<Integer> sentinelPorts() {
            return List.of();
        }

        /** @return whether the engine keeps idempotency records (Redlock does not) */
        boolean keepsRecords() {
            return true;
        }

        private String sha;

        @BeforeAll
        void users() {
            for (String app : List.of("appA", "appB")) {
                dataPorts().forEach(port -> setUser(port, recipe("resetkeys", app)));
                sentinelPorts().forEach(port -> setUser(port, recipe("sentinel|", app)));
            }
            // what every application shares on a server: a script and a function an operator loaded
            for (int port : dataPorts()) {
                if (RespQuery.text(port, "INFO", "replication").contains("role:master")) {
                    sha = RespQuery.text(port, "SCRIPT", "LOAD", "return 'probe'");
                    RespQuery.send(
                            port,
                            "FUNCTION",
                            "LOAD",
                            "REPLACE",
                            "#!lua name=" + PROBE_LIBRARY
                                    + "\nredis.register_function('probe', function() return 1 end)");
                }
            }
        }

        @AfterAll
        void dropUsers() {
            for (int port : dataPorts()) {
                RespQuery.send(port, "ACL", "DELUSER", "appA", "appB", "appC");
            }
        }

        /** @return the engine URI with {@code user}'s credentials */
        String uriOf(String user) {
            return uri().replaceFirst("://", "://" + user + ":" + password(user) + "@");
        }

        /** @return a client logged in as {@code user}, in {@code namespace} */
        Cerberus app(String user, String namespace) {
            return Cerberus.builder()
                    .engine(uriOf(user))
                    .namespace(namespace)
                    .connectTimeout(TIMEOUT)
                    .build();
        }

        @Test
        void eachAppLocksWaitsAndGuardsUnderItsOwnUser() throws Exception {
            String name = "order:" + UUID.randomUUID();
            for (String app : List.of("appA", "appB")) {
                try (Cerberus holder = app(app, app);
                        Cerberus waiter = app(app, app)) {
                    Lease held = holder.lock(name).acquire(TIMEOUT);
                    assertThat(held.isValid()).isTrue();
                    CompletableFuture<Lease> waiting = waitFor(waiter, name);
                    awaitWaiter(app, name);
                    held.close();
                    try (Lease next = waiting.get(10, TimeUnit.SECONDS)) {
                        assertThat(next.isValid())
                                .as("%s's waiter, woken by the release", app)
                                .isTrue();
                    }
                    if (keepsRecords()) {
                        IdempotencyKey key = IdempotencyKey.ofContent("charge", name);
                        assertThat(holder.idempotency(IdempotencyOptions.defaults())
                                        .execute(key, Duration.ofHours(1), () -> "charged")
                                        .status())
                                .isEqualTo(Outcome.Status.EXECUTED);
                        assertThat(waiter.idempotency(IdempotencyOptions.defaults())
                                        .execute(key, Duration.ofHours(1), () -> "again")
                                        .status())
                                .isEqualTo(Outcome.Status.REPLAYED);
                    }
                }
            }
        }

        @Test
        void sameNameOtherAppIsAnotherLock() throws Exception {
            String name = "order:" + UUID.randomUUID();
            try (Cerberus a = app("appA", "appA");
                    Cerberus b = app("appB", "appB");
                    Lease lease = a.lock(name).acquire(TIMEOUT)) {
                DistributedLock other = b.lock(name);
                assertThat(other.tryLock())
                        .as("same name, other app: another lock")
                        .isTrue();
                other.unlock();
                assertThat(lease.isValid()).isTrue();
            }
        }

        @Test
        void appBsCredentialsCannotReadReleaseOrBlockAppAsLocks() throws Exception {
            String name = "order:" + UUID.randomUUID();
            try (Cerberus a = app("appA", "appA");
                    Cerberus intruder = app("appB", "appA")) {
                DistributedLock lock = a.lock(name);
                assertThat(lock.tryLock()).isTrue();
                try {
                    assertThatThrownBy(() -> intruder.lock(name).tryLock())
                            .as("blocking or taking: B may not touch A's keys")
                            .isInstanceOf(CerberusException.class)
                            .hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> intruder.lock(name).isLocked())
                            .isInstanceOf(CerberusException.class)
                            .hasMessageContaining("NOPERM");
                    LockKeys keys = LockKeys.of(new LockKey("appA", name));
                    for (int port : dataPorts()) {
                        RedisClient client = client(port, "appB");
                        try (StatefulRedisConnection<String, String> connection = client.connect();
                                StatefulRedisPubSubConnection<String, String> pubSub = client.connectPubSub()) {
                            RedisCommands<String, String> b = connection.sync();
                            String owner = keys.owner();
                            assertThatThrownBy(() -> b.hgetall(owner))
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                            assertThatThrownBy(() -> b.del(owner))
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                            assertThatThrownBy(() -> b.pexpire(owner, 3_600_000))
                                    .as("extending A's hold")
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                            assertThatThrownBy(() -> b.eval(
                                            "return redis.call('DEL', KEYS[1])", ScriptOutputType.INTEGER, owner))
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                            assertThatThrownBy(() -> b.publish(keys.channel(), "x"))
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                            assertThatThrownBy(() -> pubSub.sync().subscribe(keys.channel()))
                                    .as("listening to A's releases")
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                            assertThatThrownBy(() -> pubSub.sync().psubscribe("cerberus:*"))
                                    .as("listening to every release")
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                        } finally {
                            client.shutdown();
                        }
                    }
                    assertThat(lock.isLocked()).as("A's lock is untouched").isTrue();
                } finally {
                    lock.unlock();
                }
            }
        }

        @Test
        void serverWideCommandsAreRefusedToBWhileAHasAWaiter() throws Exception {
            String name = "secret-" + UUID.randomUUID();
            String channel = LockKeys.of(new LockKey("appA", name)).channel();
            try (Cerberus holder = app("appA", "appA");
                    Cerberus waiter = app("appA", "appA")) {
                Lease held = holder.lock(name).acquire(TIMEOUT);
                CompletableFuture<Lease> waiting = waitFor(waiter, name);
                awaitWaiter("appA", name);
                SoftAssertions refused = new SoftAssertions(); // every command B was allowed, not only the first
                for (int port : dataPorts()) {
                    RedisClient client = client(port, "appB");
                    try (StatefulRedisConnection<String, String> connection = client.connect()) {
                        RedisCommands<String, String> b = connection.sync();
                        for (String command : DENIED) {
                            String[] more = switch (command) {
                                case "PUBSUB NUMSUB" -> new String[] {channel};
                                case "SCRIPT EXISTS" -> new String[] {sha};
                                case "SCRIPT LOAD" -> new String[] {"return 1"};
                                case "FUNCTION LOAD" ->
                                    new String[] {
                                        "#!lua name=intruder\nredis.register_function('x', function() return 1 end)"
                                    };
                                default -> new String[0];
                            };
                            refused.assertThatThrownBy(() -> send(b, command, more))
                                    .as("B on port %d: %s", port, command)
                                    .isInstanceOf(RedisCommandExecutionException.class)
                                    .hasMessageContaining("NOPERM");
                        }
                    } finally {
                        client.shutdown();
                    }
                }
                refused.assertAll();
                for (int port : dataPorts()) {
                    if (RespQuery.text(port, "INFO", "replication").contains("role:master")) {
                        assertThat(RespQuery.send(port, "SCRIPT", "EXISTS", sha))
                                .as("the operator's script on %d", port)
                                .containsExactly("1");
                        assertThat(RespQuery.text(port, "FUNCTION", "LIST"))
                                .as("the operator's function on %d", port)
                                .contains(PROBE_LIBRARY);
                    }
                }
                held.close();
                try (Lease next = waiting.get(10, TimeUnit.SECONDS)) {
                    assertThat(next.isValid()).isTrue();
                }
            }
        }

        @Test
        void appBsCredentialsCannotReadOrClaimAppAsRecords() throws Exception {
            assumeTrue(keepsRecords(), "this engine keeps no idempotency records");
            try (Cerberus a = app("appA", "appA");
                    Cerberus intruder = app("appB", "appA")) {
                IdempotencyKey key = IdempotencyKey.ofContent("charge", "order-" + UUID.randomUUID());
                Outcome<String> first =
                        a.idempotency(IdempotencyOptions.defaults()).execute(key, Duration.ofHours(1), () -> "charged");
                assertThat(first.status())
                        .as("an app's user may use the guard in its namespace")
                        .isEqualTo(Outcome.Status.EXECUTED);
                assertThatThrownBy(() -> intruder.idempotency(IdempotencyOptions.defaults())
                                .execute(key, Duration.ofHours(1), () -> "again"))
                        .as("B may not read or claim A's records")
                        .hasStackTraceContaining("NOPERM");
                String record = RedisIdempotencyStore.key("appA/" + key.id());
                for (int port : dataPorts()) {
                    RedisClient client = client(port, "appB");
                    try (StatefulRedisConnection<String, String> connection = client.connect()) {
                        assertThatThrownBy(() -> connection.sync().del(record))
                                .isInstanceOf(RedisCommandExecutionException.class)
                                .hasMessageContaining("NOPERM");
                    } finally {
                        client.shutdown();
                    }
                }
                assertThat(a.idempotency(IdempotencyOptions.defaults())
                                .execute(key, Duration.ofHours(1), () -> "again")
                                .status())
                        .isEqualTo(Outcome.Status.REPLAYED);
            }
        }

        @Test
        void anAppsEpochIsKeptUnderItsOwnUserAndBsCredentialsCannotRaiseIt() {
            try (LockEngine a = Engines.open(uriOf("appA"), TIMEOUT);
                    LockEngine intruder = Engines.open(uriOf("appB"), TIMEOUT)) {
                assumeTrue(a.ability(KeepsEpochs.class).isPresent(), "this engine keeps no epochs");
                KeepsEpochs epochs = a.ability(KeepsEpochs.class).orElseThrow();
                long raised = epochs.raiseEpoch("appA", epochs.epoch("appA") + 1);
                assertThat(epochs.epoch("appA"))
                        .as("an app's user may read and raise its namespace's epoch")
                        .isEqualTo(raised);
                KeepsEpochs intruders = intruder.ability(KeepsEpochs.class).orElseThrow();
                assertThatThrownBy(() -> intruders.raiseEpoch("appA", raised + 1))
                        .as("B may not raise A's epoch")
                        .isInstanceOf(EngineUnavailableException.class)
                        .hasMessageContaining("NOPERM");
                assertThatThrownBy(() -> intruders.epoch("appA"))
                        .as("nor read it")
                        .hasMessageContaining("NOPERM");
                assertThat(epochs.epoch("appA")).isEqualTo(raised);
            }
        }

        /** @return the lock taken by {@code client} on another thread, once it is free */
        private static CompletableFuture<Lease> waitFor(Cerberus client, String name) {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    return client.lock(name).acquire(Duration.ofSeconds(20));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + name, e);
                }
            });
        }

        /** Waits until a data server lists a subscriber of the lock's channel: the waiter is asleep on it. */
        private void awaitWaiter(String app, String name) {
            String channel = LockKeys.of(new LockKey(app, name)).channel();
            Await.until(
                    "a waiter of " + name + " subscribed to " + channel,
                    TIMEOUT,
                    () -> dataPorts().stream()
                            .anyMatch(port -> RespQuery.send(port, "PUBSUB", "CHANNELS", channel)
                                    .contains(channel)));
        }
    }
}
