package io.cerberus.memcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cerberus.Cerberus;
import io.cerberus.DistributedLock;
import io.cerberus.EngineUnavailableException;
import io.cerberus.LockLostException;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.servers.MemcachedServer;
import io.cerberus.testkit.CapturedLogs;
import io.cerberus.testkit.Poll;
import io.cerberus.testkit.ServerExtension;
import io.cerberus.testkit.TestTimes;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What is memcached's own: keys, expiry rounding, owner checks on CAS, restarts, several servers, the URI. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MemcachedEngineTest {
    @RegisterExtension
    static final ServerExtension<MemcachedServer> SERVER = ServerExtension.perClass(
            () -> MemcachedServer.builder().memoryMb(16).start());

    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private final String namespace = "engine-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closedAfter(T closeable) {
        closeAfter.add(closeable);
        return closeable;
    }

    private Cerberus client(String uri, Duration defaultLease) {
        return closedAfter(Cerberus.builder()
                .engine(uri)
                .namespace(namespace)
                .defaultLease(defaultLease)
                .connectTimeout(Duration.ofSeconds(2))
                .build());
    }

    private MemcachedStore store(String uri) {
        return closedAfter(MemcachedStore.open(uri, MemcachedTarget.parse(uri), Duration.ofSeconds(2)));
    }

    // ---- keys ------------------------------------------------------------------------------------

    @Test
    void keysMemcachedCannotStoreAreHashedToDistinctValidKeys() {
        String plain = "cerberus:7:default:order-42";
        assertThat(MemcachedStore.storeKey(plain)).isEqualTo(plain);
        List<String> odd = List.of(
                "a b",
                "tab\tkey",
                "ключ",
                "錠",
                "x".repeat(251),
                "x".repeat(600),
                "x".repeat(600) + "y",
                MemcachedStore.HASHED_KEY_PREFIX + "looks-hashed");
        Set<String> stored = new HashSet<>();
        for (String key : odd) {
            String mapped = MemcachedStore.storeKey(key);
            assertThat(mapped)
                    .as("stored key of '%s'", key)
                    .startsWith(MemcachedStore.HASHED_KEY_PREFIX)
                    .hasSizeLessThanOrEqualTo(MemcachedStore.MAX_KEY_BYTES)
                    .matches("[!-~]+");
            stored.add(mapped);
        }
        assertThat(stored).as("no two keys share an entry").hasSize(odd.size()).doesNotContain(plain);
        assertThat(MemcachedStore.storeKey("x".repeat(250)))
                .as("250 bytes is still a memcached key")
                .isEqualTo("x".repeat(250));
    }

    @Test
    void oddKeysAreSeparateEntriesOnTheServer() {
        MemcachedStore store = store(SERVER.get().uri());
        String base = UUID.randomUUID().toString();
        List<String> keys =
                List.of(base + " with spaces", base + "ключ", base + "x".repeat(600), base + "x".repeat(599) + "y");
        long before = SERVER.get().items();
        for (String key : keys) {
            assertThat(store.putIfAbsent(key, "owner of " + key, Duration.ofSeconds(30)))
                    .as("'%s' is free", key)
                    .isTrue();
        }
        assertThat(SERVER.get().items() - before).as("one entry per key").isEqualTo(keys.size());
        for (String key : keys) {
            assertThat(store.get(key)).contains("owner of " + key);
            assertThat(store.putIfAbsent(key, "someone else", Duration.ofSeconds(30)))
                    .isFalse();
        }
    }

    @Test
    void oddNamesLockSeparately() {
        List<String> names = List.of("a b", "ключ", "x".repeat(512), "x".repeat(511) + "y");
        Cerberus mine = client(SERVER.get().uri(), Duration.ofSeconds(30));
        Cerberus theirs = client(SERVER.get().uri(), Duration.ofSeconds(30));
        for (String name : names) {
            assertThat(mine.lock(name).tryLock()).as("'%s' is free", name).isTrue();
        }
        for (String name : names) {
            assertThat(theirs.lock(name).tryLock()).as("'%s' is held", name).isFalse();
            mine.lock(name).unlock();
            assertThat(theirs.lock(name).tryLock())
                    .as("'%s' is free again", name)
                    .isTrue();
            theirs.lock(name).unlock();
        }
    }

    // ---- owner checks ----------------------------------------------------------------------------

    @Test
    void anotherTokenCanNeitherExtendNorDelete() {
        MemcachedStore store = store(SERVER.get().uri());
        String key = "owned-" + UUID.randomUUID();
        assertThat(store.putIfAbsent(key, "owner", Duration.ofSeconds(30))).isTrue();
        assertThat(store.replaceIfEquals(key, "intruder", "intruder", Duration.ofSeconds(30)))
                .isFalse();
        assertThat(store.deleteIfEquals(key, "intruder")).isFalse();
        assertThat(store.get(key)).contains("owner");
        assertThat(store.replaceIfEquals(key, "owner", "owner", Duration.ofSeconds(30)))
                .isTrue();
        assertThat(store.deleteIfEquals(key, "owner")).isTrue();
        assertThat(store.get(key)).isEmpty();
        assertThat(store.deleteIfEquals(key, "owner")).as("a second delete").isFalse();
        assertThat(store.replaceIfEquals(key, "owner", "owner", Duration.ofSeconds(30)))
                .as("a renewal of a deleted entry")
                .isFalse();
    }

    @Test
    void anOwnerWhoseEntryExpiredAndWasRetakenCannotTouchTheNewOne() {
        MemcachedStore store = store(SERVER.get().uri());
        String key = "retaken-" + UUID.randomUUID();
        assertThat(store.putIfAbsent(key, "first", store.expiryFor(Duration.ofMillis(1))))
                .isTrue();
        Poll.until(
                "the first owner's entry to expire",
                TestTimes.millis(5000),
                () -> store.get(key).isEmpty());
        assertThat(store.putIfAbsent(key, "second", Duration.ofSeconds(30))).isTrue();
        assertThat(store.replaceIfEquals(key, "first", "first", Duration.ofSeconds(30)))
                .isFalse();
        assertThat(store.deleteIfEquals(key, "first")).isFalse();
        assertThat(store.get(key)).contains("second");
    }

    @Test
    void thereAreNoFencingTokensAndTheErrorSaysWhy() {
        DistributedLock lock =
                client(SERVER.get().uri(), Duration.ofSeconds(30)).lock("unfenced");
        lock.lock();
        assertThatThrownBy(() -> lock.lease().fencingToken())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("gives no fencing tokens")
                .hasMessageContaining("evicts them or restarts");
        lock.unlock();
    }

    // ---- expiry ----------------------------------------------------------------------------------

    @Test
    void expiryIsTheLeaseRoundedUpToSecondsPlusTheTickMemcachedMayLag() {
        MemcachedStore store = store(SERVER.get().uri());
        assertThat(store.expiryFor(Duration.ofMillis(1))).isEqualTo(Duration.ofSeconds(2));
        assertThat(store.expiryFor(Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(2));
        assertThat(store.expiryFor(Duration.ofMillis(1001))).isEqualTo(Duration.ofSeconds(3));
        assertThat(store.expiryFor(Duration.ofDays(30).minusSeconds(1)))
                .as("the longest relative exptime")
                .isEqualTo(Duration.ofDays(30));
        assertThat(store.expiryFor(Duration.ofDays(30)))
                .as("no tick added past memcached's limit")
                .isEqualTo(Duration.ofDays(30));
        assertThatThrownBy(() -> store.expiryFor(Duration.ofDays(30).plusMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 30 days");
    }

    @Test
    void anEntryOutlivesItsLeaseByAtMostTheRounding() {
        MemcachedStore store = store(SERVER.get().uri());
        String key = "rounded-" + UUID.randomUUID();
        Duration lease = Duration.ofSeconds(1);
        long setAt = System.nanoTime();
        assertThat(store.putIfAbsent(key, "owner", store.expiryFor(lease))).isTrue();
        Poll.until(
                "the entry to expire",
                TestTimes.millis(5000),
                () -> store.get(key).isEmpty());
        Duration lived = Duration.ofNanos(System.nanoTime() - setAt);
        assertThat(lived)
                .as("alive for its whole lease")
                .isGreaterThanOrEqualTo(lease)
                .as("gone by the rounded expiry")
                .isLessThan(store.expiryFor(lease).plus(TestTimes.millis(500)));
    }

    @Test
    void aLeaseOverThirtyDaysIsRefusedNotReadAsADate() {
        DistributedLock lock =
                client(SERVER.get().uri(), Duration.ofSeconds(30)).lock("month");
        assertThatThrownBy(() -> lock.lock(Duration.ofDays(31)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 30 days");
        assertThat(lock.isLocked()).isFalse();
    }

    // ---- server failures -------------------------------------------------------------------------

    @Test
    void aRestartFreesLocksAndTheHolderLearnsAtItsNextRenewal() {
        try (MemcachedServer own = MemcachedServer.builder().memoryMb(16).start()) {
            DistributedLock mine = client(own.uri(), Duration.ofSeconds(3)).lock("restart");
            mine.lock();
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            mine.lease().onLost((lease, reason) -> lost.set(reason));

            own.kill();
            own.restart();
            DistributedLock theirs = client(own.uri(), Duration.ofSeconds(30)).lock("restart");
            assertThat(theirs.tryLock()).as("the restarted server has no entry").isTrue();

            Poll.until("the holder to learn its loss", TestTimes.millis(6000), () -> lost.get() != null);
            assertThat(lost.get()).hasMessageContaining("refused to renew");
            assertThat(mine.lease().isValid()).isFalse();
            assertThatThrownBy(mine::unlock).isInstanceOf(LockLostException.class);
            assertThat(theirs.isHeldByCurrentThread()).isTrue();
            theirs.unlock();
        }
    }

    @Test
    void aPausedServerFailsCallsWithinTheTimeoutInsteadOfHanging() {
        try (MemcachedServer own = MemcachedServer.builder().memoryMb(16).start()) {
            Cerberus cerberus = client(own.uri() + "?timeout=500ms", Duration.ofSeconds(30));
            DistributedLock lock = cerberus.lock("paused");
            own.pause();
            try {
                long start = System.nanoTime();
                assertThatThrownBy(lock::tryLock)
                        .isInstanceOf(EngineUnavailableException.class)
                        .hasMessageContaining(own.uri())
                        .hasMessageContaining("500ms");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(2500));
            } finally {
                own.resume();
            }
            // the timed-out add may have landed once resumed: its entry lasts its lease, so ask for another lock
            DistributedLock other = cerberus.lock("after-the-pause");
            assertThat(other.tryLock()).as("answers again once resumed").isTrue();
            other.unlock();
        }
    }

    @Test
    void aServerThatNeverAnswersFailsOpeningWithinTheTimeout() throws IOException {
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)); // accepts in the kernel, never answers
            String uri = "memcached://127.0.0.1:" + silent.getLocalPort();
            long start = System.nanoTime();
            assertThatThrownBy(() -> Cerberus.builder()
                            .engine(uri)
                            .connectTimeout(Duration.ofSeconds(1))
                            .build())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(uri);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimes.millis(3000));
        }
    }

    // ---- server settings -------------------------------------------------------------------------

    @Test
    void aServerThatMayEvictIsUsedWithOneWarning() {
        try (MemcachedServer evicting =
                        MemcachedServer.builder().memoryMb(16).evictions(true).start();
                CapturedLogs logs = CapturedLogs.of("io.cerberus.memcached", Level.WARNING)) {
            Cerberus cerberus = client(evicting.uri(), Duration.ofSeconds(30));
            assertThat(cerberus.lock("evictable").tryLock()).isTrue();
            assertThat(logs.messages(Level.WARNING))
                    .singleElement()
                    .asString()
                    .contains(evicting.uri())
                    .contains("evictions on")
                    .contains("-M");
            assertThat(cerberus.checkEngine(cerberus.currentEngine()))
                    .as("the health shows it too")
                    .singleElement()
                    .asString()
                    .contains("evictions on")
                    .contains("-M");
        }
    }

    @Test
    void aServerWithoutEvictionsIsUsedSilently() {
        try (CapturedLogs logs = CapturedLogs.of("io.cerberus.memcached", Level.WARNING)) {
            Cerberus cerberus = client(SERVER.get().uri(), Duration.ofSeconds(30));
            assertThat(cerberus.lock("quiet").tryLock()).isTrue();
            assertThat(logs.messages(Level.WARNING)).isEmpty();
            assertThat(cerberus.checkEngine(cerberus.currentEngine())).isEmpty();
        }
    }

    @Test
    void aServerWithoutCasIsRefused() {
        try (MemcachedServer noCas =
                MemcachedServer.builder().memoryMb(16).cas(false).start()) {
            assertThatThrownBy(() -> Cerberus.builder().engine(noCas.uri()).build())
                    .isInstanceOf(EngineUnavailableException.class)
                    .hasMessageContaining(noCas.uri())
                    .hasMessageContaining("CAS off (-C)");
        }
    }

    // ---- several servers -------------------------------------------------------------------------

    @Test
    void aKeyNeverMovesToAnotherServerWhileItsOwnIsDown() {
        try (MemcachedServer first = MemcachedServer.builder().memoryMb(16).start();
                MemcachedServer second = MemcachedServer.builder().memoryMb(16).start()) {
            String uri = "memcached://127.0.0.1:" + first.port() + ",127.0.0.1:" + second.port() + "?timeout=500ms";
            Cerberus mine = client(uri, Duration.ofSeconds(30));
            Cerberus theirs = client(uri.replace("?timeout=500ms", "?timeout=200ms"), Duration.ofSeconds(30));
            List<String> names = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                names.add("spread-" + i);
                assertThat(mine.lock("spread-" + i).tryLock()).isTrue();
            }
            assertThat(first.items()).as("locks on the first server").isPositive();
            assertThat(second.items()).as("locks on the second server").isPositive();

            second.kill();
            int held = 0;
            int unreachable = 0;
            for (String name : names) {
                try {
                    assertThat(theirs.lock(name).tryLock())
                            .as("'%s' taken on another server", name)
                            .isFalse();
                    held++;
                } catch (EngineUnavailableException e) {
                    unreachable++;
                }
            }
            assertThat((long) held).as("locks on the server still up").isEqualTo(first.items());
            assertThat(unreachable).as("locks on the server that is down").isPositive();
        }
    }

    // ---- the URI ---------------------------------------------------------------------------------

    @Test
    void theUriNamesServersAndATimeout() {
        MemcachedTarget target = MemcachedTarget.parse("memcached://cache1,cache2:11212,[::1]:11213?timeout=250ms");
        assertThat(target.servers())
                .extracting(InetSocketAddress::getHostString)
                .containsExactly("cache1", "cache2", "::1");
        assertThat(target.servers()).extracting(InetSocketAddress::getPort).containsExactly(11211, 11212, 11213);
        assertThat(target.timeout()).contains(Duration.ofMillis(250));
        assertThat(MemcachedTarget.parse("memcached://cache").timeout()).isEmpty();
    }

    @Test
    void badUrisAreRefusedNamingTheRule() {
        assertRefused("memcached://", "has an empty host");
        assertRefused("memcached://a,,b", "has an empty host");
        assertRefused("memcached://cache:0", "from 1 to 65535");
        assertRefused("memcached://cache:70000", "from 1 to 65535");
        assertRefused("memcached://cache:port", "from 1 to 65535");
        assertRefused("memcached://cache_1", "bad memcached server 'cache_1:11211'");
        assertRefused("memcached://cache/locks", "no path");
        assertRefused("memcached://cache,cache:11211", "listed twice");
        assertRefused(
                "memcached://localhost:" + SERVER.get().port() + ",127.0.0.1:"
                        + SERVER.get().port(),
                "twice (under two names)");
        assertRefused("memcached://cache?foo=1", "unknown parameter 'foo'");
        assertRefused("memcached://cache?timeout=2s&timeout=3s", "given twice");
        assertRefused("memcached://cache?timeout=soon", "positive duration");
        assertRefused("memcached://cache?timeout=0s", "positive duration");
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("memcached://admin:s3cret@cache:11211")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("takes no user or password")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> Cerberus.builder()
                        .engine("memcached://cache?password=s3cret")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'password'")
                .hasMessageNotContaining("s3cret");
    }

    private static void assertRefused(String uri, String rule) {
        assertThatThrownBy(() -> Cerberus.builder().engine(uri).build())
                .as(uri)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(rule);
    }
}
