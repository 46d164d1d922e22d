package io.cerberus.spi.support;

import io.cerberus.Capability;
import io.cerberus.UnsupportedCapabilityException;
import io.cerberus.spi.AcquireResult;
import io.cerberus.spi.Acquisition;
import io.cerberus.spi.IdempotencyStore;
import io.cerberus.spi.KeepsEpochs;
import io.cerberus.spi.KeepsIdempotencyRecords;
import io.cerberus.spi.LinesUpLocally;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.LockKey;
import io.cerberus.spi.LockMode;
import io.cerberus.spi.ReleasesByForce;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A lock engine built on a {@link KeyValueStore}: exclusive locks with a lease, owner-checked
 * renewal and release, and fencing tokens when the store is also a {@link FencingCounter}.
 *
 * <p><b>How.</b> A lock is one entry whose value is the holding attempt's token: acquire is
 * put-if-absent with the lease as expiry, renew and release replace or delete it only while it
 * still holds that token. A grant then takes the next value of the namespace's counter as its fencing
 * token; the counter is read while the lock is held, so a later holder always gets a larger one.
 * With a counter, the grant then writes its fencing token into the entry ({@code token#fence}), so
 * that an operator can free the hold by that token ({@link ReleasesByForce}) and never a newer one;
 * the holder learns at its next renewal, which finds its entry gone.
 * A repeated acquire of an attempt that already holds (its answer lost) finds its own token and
 * is granted again, with the same fencing token. Idempotency records live in the same store
 * (one entry per key, changed only while unchanged since read).
 *
 * <p><b>Waiting.</b> The store sends no notifications, so a waiter asks again after a backoff
 * ({@link #FIRST_PAUSE} doubling to {@link #MAX_PAUSE}, jittered). The core lines up the waiters of
 * one client ({@link LinesUpLocally}) and runs that backoff, so only one of them per lock asks; a
 * busy answer names the holder, so a waiter behind a hold of its own client waits for its release
 * here, which wakes it at once. A release in another process is seen within one pause.
 */
public final class KeyValueEngine
        implements LockEngine, KeepsIdempotencyRecords, LinesUpLocally, ReleasesByForce, KeepsEpochs {
    /** The ceiling of a waiter's first pause. */
    public static final Duration FIRST_PAUSE = Duration.ofMillis(10);
    /** The ceiling of a waiter's later pauses, and so the longest a release elsewhere goes unseen. */
    public static final Duration MAX_PAUSE = Duration.ofMillis(250);

    private final KeyValueStore store;
    private final FencingCounter counter;
    private final Set<Capability> capabilities;
    private final KeyValueIdempotencyStore records;
    /** Between an attempt's token and its fencing token in an entry's value (tokens are hex). */
    private static final char FENCE_MARK = '#';

    /** The fencing token of each grant of this engine not yet released, by attempt token. */
    private final Map<String, Long> fences = new ConcurrentHashMap<>();

    /** @param store the store; a {@link FencingCounter} too if its counters only go up */
    public KeyValueEngine(KeyValueStore store) {
        this.store = store;
        this.counter = store instanceof FencingCounter fencing ? fencing : null;
        EnumSet<Capability> can = EnumSet.noneOf(Capability.class);
        if (counter != null) {
            can.add(Capability.FENCING);
        }
        if (store.shared()) {
            can.add(Capability.MULTI_PROCESS);
        }
        this.capabilities = Set.copyOf(can);
        this.records = new KeyValueIdempotencyStore(store);
    }

    /**
     * The store key of a lock: a prefix, the namespace's length, the namespace and the name, so
     * that no two locks share a key whatever their text.
     *
     * @param key the lock
     * @return its entry's key
     */
    public static String entryKey(LockKey key) {
        return "cerberus:" + key.namespace().length() + ":" + key.namespace() + ":" + key.name();
    }

    /**
     * @param namespace a namespace
     * @return the key of the fencing counter that the namespace's locks share (so a released name
     *     leaves nothing in the store), which no entry or epoch key equals
     */
    public static String counterKey(String namespace) {
        return "cerberus-fence:" + namespace.length() + ":" + namespace;
    }

    /**
     * @param namespace a namespace
     * @return the key of its epoch, which no entry or counter key equals
     */
    static String epochKey(String namespace) {
        return "cerberus-epoch:" + namespace.length() + ":" + namespace;
    }

    /** Only with counters that only go up: a store that may lose its data may lose an epoch too. */
    @Override
    public <A> Optional<A> ability(Class<A> ability) {
        return ability == KeepsEpochs.class && counter == null ? Optional.empty() : LockEngine.super.ability(ability);
    }

    @Override
    public long epoch(String namespace) {
        return store.get(epochKey(namespace)).map(Long::parseLong).orElse(0L);
    }

    /** Compare-and-set on the epoch's entry, kept for ever, until the epoch is at least {@code atLeast}. */
    @Override
    public long raiseEpoch(String namespace, long atLeast) {
        String key = epochKey(namespace);
        String wanted = Long.toString(atLeast);
        while (true) {
            Optional<String> now = store.get(key);
            if (now.isEmpty()) {
                if (store.putIfAbsent(key, wanted, KeyValueStore.FOREVER)) {
                    return atLeast;
                }
            } else if (Long.parseLong(now.get()) >= atLeast) {
                return Long.parseLong(now.get());
            } else if (store.replaceIfEquals(key, now.get(), wanted, KeyValueStore.FOREVER)) {
                return atLeast;
            }
        }
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public Optional<Duration> silentHolderExpiry(Duration lease) {
        return Optional.of(store.expiryFor(lease));
    }

    @Override
    public Optional<String> whyNot(Capability capability) {
        return store.whyNot(capability);
    }

    @Override
    public AcquireResult tryAcquire(Acquisition attempt) {
        exclusiveOnly(attempt);
        String key = entryKey(attempt.key());
        boolean put = store.putIfAbsent(key, attempt.token(), store.expiryFor(attempt.lease()));
        Optional<String> value = put ? Optional.of(attempt.token()) : store.get(key);
        String holder = value.map(KeyValueEngine::attemptOf).orElse(null);
        if (!attempt.token().equals(holder)) {
            return AcquireResult.busy(MAX_PAUSE, holder, -1);
        }
        if (counter == null) {
            return AcquireResult.granted(-1);
        }
        long fence = fence(attempt);
        String fenced = entryValue(attempt.token(), fence);
        if (value.get().equals(fenced)
                || store.replaceIfEquals(key, attempt.token(), fenced, store.expiryFor(attempt.lease()))) {
            return AcquireResult.granted(fence);
        }
        // the entry went between the put and now (expired, or freed by force): ask again
        fences.remove(attempt.token());
        return AcquireResult.busy(FIRST_PAUSE, null, -1);
    }

    /**
     * @param value an entry's value
     * @return the token of the attempt that holds it
     */
    private static String attemptOf(String value) {
        int mark = value.indexOf(FENCE_MARK);
        return mark < 0 ? value : value.substring(0, mark);
    }

    private static String entryValue(String attemptToken, long fence) {
        return attemptToken + FENCE_MARK + fence;
    }

    /** @return the value of the attempt's entry, as its grant wrote it */
    private String entryValue(Acquisition attempt) {
        Long fence = fences.get(attempt.token());
        return fence == null ? attempt.token() : entryValue(attempt.token(), fence);
    }

    @Override
    public Duration firstBackoff() {
        return FIRST_PAUSE;
    }

    @Override
    public Duration maxBackoff() {
        return MAX_PAUSE;
    }

    private long fence(Acquisition attempt) {
        Long known = fences.get(attempt.token());
        if (known != null) {
            return known;
        }
        long next = counter.increment(counterKey(attempt.key().namespace()));
        fences.put(attempt.token(), next);
        return next;
    }

    @Override
    public void awaitChange(Acquisition attempt, Duration max) throws InterruptedException {
        // nothing to listen to: a release elsewhere is seen by asking again after the pause
        TimeUnit.NANOSECONDS.sleep(max.toNanos());
    }

    @Override
    public void abandon(Acquisition attempt) {
        release(attempt);
    }

    @Override
    public boolean renew(Acquisition attempt) {
        String value = entryValue(attempt);
        return store.replaceIfEquals(entryKey(attempt.key()), value, value, store.expiryFor(attempt.lease()));
    }

    @Override
    public boolean release(Acquisition attempt) {
        String value = entryValue(attempt);
        fences.remove(attempt.token());
        String key = entryKey(attempt.key());
        // a grant whose fence was not written (its answer lost, then abandoned) left the bare token
        return store.deleteIfEquals(key, value)
                || (!value.equals(attempt.token()) && store.deleteIfEquals(key, attempt.token()));
    }

    @Override
    public boolean forceRelease(LockKey key, long fencingToken) {
        if (counter == null) {
            throw new UnsupportedCapabilityException(
                    "engine " + describe() + " has no fencing tokens to name a hold by");
        }
        String entry = entryKey(key);
        Optional<String> value = store.get(entry);
        return value.filter(held -> held.endsWith(FENCE_MARK + Long.toString(fencingToken)))
                .map(held -> store.deleteIfEquals(entry, held))
                .orElse(false);
    }

    @Override
    public boolean isLocked(LockKey key) {
        return store.get(entryKey(key)).isPresent();
    }

    @Override
    public List<String> checkHealth(LockKey probe) {
        isLocked(probe);
        return store.healthWarnings();
    }

    @Override
    public IdempotencyStore idempotencyStore() {
        return records;
    }

    @Override
    public void close() {
        store.close();
    }

    private void exclusiveOnly(Acquisition attempt) {
        if (attempt.mode() != LockMode.EXCLUSIVE) {
            throw new UnsupportedCapabilityException("engine " + describe() + " has exclusive locks only, not "
                    + attempt.mode().label());
        }
    }
}
