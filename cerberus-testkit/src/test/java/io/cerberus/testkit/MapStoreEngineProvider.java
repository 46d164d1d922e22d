package io.cerberus.testkit;

import io.cerberus.Capability;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.FencingCounter;
import io.cerberus.spi.support.KeyValueEngine;
import io.cerberus.spi.support.KeyValueStore;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sample engine of the simple tier: {@code kv-map:NAME}, a map in this JVM shared by every
 * client that names it, made a full engine by {@link KeyValueEngine}. It shows what an engine
 * author writes for a plain key-value store: five atomic operations and a provider. Idempotency
 * records come with it.
 */
public final class MapStoreEngineProvider implements EngineProvider {
    private static final Map<String, MapStore> STORES = new ConcurrentHashMap<>();

    /** For {@link java.util.ServiceLoader}. */
    public MapStoreEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("kv-map");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return Set.of(Capability.FENCING);
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        String name = context.uri().substring("kv-map:".length());
        if (name.isEmpty()) {
            throw new IllegalArgumentException("a kv-map URI names its map: kv-map:NAME, was " + context.uri());
        }
        return new KeyValueEngine(STORES.computeIfAbsent(name, MapStore::new).client());
    }

    /** The entries and counters of one map; each engine gets a client that closes alone. */
    private static final class MapStore implements FencingCounter {
        private final String name;
        private final Map<String, Entry> entries = new ConcurrentHashMap<>();
        private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();

        MapStore(String name) {
            this.name = name;
        }

        KeyValueStore client() {
            return new Client(this);
        }

        @Override
        public long increment(String key) {
            return counters.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
        }

        /** @return the live entry under {@code key}, dropping an expired one */
        Entry live(String key) {
            return entries.computeIfPresent(key, (k, entry) -> entry.expired() ? null : entry);
        }
    }

    private record Entry(String value, long expiresAt, boolean forever) {
        static Entry of(String value, Duration expiry) {
            // past 2^62 ns (146 years) nanoTime's wrap-safe comparison no longer holds: kept for ever
            boolean forever = expiry.equals(KeyValueStore.FOREVER) || expiry.compareTo(Duration.ofNanos(1L << 62)) > 0;
            return new Entry(value, forever ? 0 : System.nanoTime() + expiry.toNanos(), forever);
        }

        boolean expired() {
            return !forever && System.nanoTime() - expiresAt >= 0;
        }
    }

    private record Client(MapStore map) implements KeyValueStore, FencingCounter {
        @Override
        public String describe() {
            return "kv-map:" + map.name;
        }

        @Override
        public boolean shared() {
            return false;
        }

        @Override
        public boolean putIfAbsent(String key, String value, Duration expiry) {
            Entry mine = Entry.of(value, expiry);
            return map.entries.compute(key, (k, entry) -> entry == null || entry.expired() ? mine : entry) == mine;
        }

        @Override
        public boolean replaceIfEquals(String key, String expected, String value, Duration expiry) {
            Entry mine = Entry.of(value, expiry);
            return map.entries.computeIfPresent(
                            key, (k, entry) -> !entry.expired() && entry.value().equals(expected) ? mine : entry)
                    == mine;
        }

        @Override
        public boolean deleteIfEquals(String key, String expected) {
            boolean[] deleted = {false};
            map.entries.computeIfPresent(key, (k, entry) -> {
                deleted[0] = !entry.expired() && entry.value().equals(expected);
                return deleted[0] || entry.expired() ? null : entry;
            });
            return deleted[0];
        }

        @Override
        public Optional<String> get(String key) {
            return Optional.ofNullable(map.live(key)).map(Entry::value);
        }

        @Override
        public long increment(String key) {
            return map.increment(key);
        }

        @Override
        public void close() {
            // the map outlives its clients, as a server would
        }
    }
}
