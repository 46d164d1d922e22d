package io.cerberus.local;

import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code mem:} idempotency store: records in this JVM, one map per store name, expiry on the
 * monotonic clock. Each change is one atomic {@code compute} of the record; completions and
 * releases wake waiting duplicates. Records that are over are swept at most once a minute, by a
 * claim, and at once when the store is full.
 *
 * <p>Bounded, as the heap is: a claim is refused ({@link EngineUnavailableException}, so the guard
 * fails closed or open as configured) while the store holds {@link Limits#maxRecords()} records or
 * {@link Limits#maxBytes()} bytes, and a result is kept only if it fits in the bytes left (else the
 * guard records "ran, result not kept": the operation never runs twice for want of room). Sizes are
 * estimates of the heap a record takes; claims racing for the last place may pass a limit by one
 * record each.
 */
final class MemoryIdempotencyStore implements IdempotencyStore {
    private static final Map<String, MemoryIdempotencyStore> NAMED = new ConcurrentHashMap<>();
    /** What a record takes besides its strings and result: the entry, the record, the map node. */
    private static final long RECORD_OVERHEAD = 160;

    private static final long FULL_SWEEP_EVERY_NANOS = 100_000_000L;
    /** Kept longer than this is kept for ever ({@link #until}). */
    private static final Duration FOR_EVER_PAST = Duration.ofNanos(1L << 62);

    /**
     * The bounds of one store.
     *
     * @param maxRecords the most records, live or not yet swept
     * @param maxBytes the most bytes of records (ids, tokens, results), estimated
     */
    record Limits(long maxRecords, long maxBytes) {
        /** 100,000 records, 64 MiB. */
        static final Limits DEFAULT = new Limits(100_000, 64L << 20);
    }

    private final String name;
    private final Limits limits;
    private final Map<String, Entry> records = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final long sweepEveryNanos;
    private final AtomicLong nextSweep = new AtomicLong(System.nanoTime());
    private final AtomicLong nextFullSweep = new AtomicLong(System.nanoTime());
    /** Waiting duplicates wait on this; completions and releases wake them. */
    // A lock and condition, not a monitor: a virtual thread waiting here leaves its carrier free.
    private final ReentrantLock changes = new ReentrantLock();

    private final Condition changed = changes.newCondition();

    /** A record and when it ends (Long.MAX_VALUE: never). */
    private record Entry(IdempotencyRecord record, long expiresAtNanos) {
        boolean live(long now) {
            return expiresAtNanos == Long.MAX_VALUE || now - expiresAtNanos < 0;
        }
    }

    /**
     * @param name the engine URI, for messages
     * @param limits the bounds
     * @param sweepEvery how often a claim removes the records that are over
     */
    MemoryIdempotencyStore(String name, Limits limits, Duration sweepEvery) {
        this.name = name;
        this.limits = limits;
        this.sweepEveryNanos = sweepEvery.toNanos();
    }

    /** @return the store of this name, with the default bounds when it is new */
    static MemoryIdempotencyStore named(String name) {
        return named(name, Optional.empty());
    }

    /**
     * @param name the engine URI ({@code mem:NAME})
     * @param limits bounds the URI asked for, if any
     * @return the store of this name, made with those bounds (or the default ones) if it is new
     * @throws IllegalArgumentException if the store is open already with other bounds
     */
    static MemoryIdempotencyStore named(String name, Optional<Limits> limits) {
        MemoryIdempotencyStore store = NAMED.computeIfAbsent(
                name, n -> new MemoryIdempotencyStore(n, limits.orElse(Limits.DEFAULT), Duration.ofMinutes(1)));
        if (limits.isPresent() && !limits.get().equals(store.limits)) {
            throw new IllegalArgumentException(
                    "the idempotency records of " + name + " are already kept in this JVM with maxRecords="
                            + store.limits.maxRecords() + " and maxRecordBytes=" + store.limits.maxBytes()
                            + "; open it with the same limits,"
                            + " with none, or use another store name");
        }
        return store;
    }

    /** @return the estimated heap bytes of a record with this id */
    private static long weight(String id, IdempotencyRecord record) {
        long strings = id.length()
                + record.token().length()
                + (record.fingerprint() == null ? 0 : record.fingerprint().length());
        return RECORD_OVERHEAD + 2 * strings + (record.result() == null ? 0 : record.result().length);
    }

    private boolean full() {
        return records.size() >= limits.maxRecords() || bytes.get() >= limits.maxBytes();
    }

    /**
     * @return when a record kept for {@code time} from {@code now} ends; never (Long.MAX_VALUE) for null and for a
     *     time past 2^62 ns (146 years: longer than any process lives, and past what nanoTime's wrap-safe
     *     comparison spans)
     */
    private static long until(long now, Duration time) {
        if (time == null || time.compareTo(FOR_EVER_PAST) > 0) {
            return Long.MAX_VALUE;
        }
        long nanos = time.toNanos();
        return now + nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : now + nanos;
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        long now = System.nanoTime();
        sweepNowAndThen(now);
        if (full()) {
            sweepWhenFull(now);
        }
        IdempotencyRecord[] existing = new IdempotencyRecord[1];
        boolean[] refused = new boolean[1];
        records.compute(id, (key, entry) -> {
            if (entry != null && entry.live(now)) {
                if (!entry.record().completed() && entry.record().token().equals(token)) {
                    return new Entry(entry.record(), until(now, lease)); // our own claim, sent again
                }
                existing[0] = entry.record();
                return entry;
            }
            if (full()) {
                refused[0] = true;
                return entry;
            }
            IdempotencyRecord claim = new IdempotencyRecord(false, token, fingerprint, null, false);
            bytes.addAndGet(weight(key, claim) - (entry == null ? 0 : weight(key, entry.record())));
            return new Entry(claim, until(now, lease));
        });
        if (refused[0]) {
            throw new EngineUnavailableException(
                    "the idempotency records of " + name + " fill what this JVM keeps for them ("
                            + records.size() + " records of at most " + limits.maxRecords() + ", about " + bytes.get()
                            + " bytes of at most "
                            + limits.maxBytes()
                            + "); records are kept for their retention: shorten it, raise maxRecords or maxRecordBytes"
                            + " in the URI, or keep records on a server engine (redis://, jdbc:...)",
                    null);
        }
        return Optional.ofNullable(existing[0]);
    }

    /** The result that fits in the bytes left: a larger one is kept as "ran, result not kept". */
    @Override
    public int maxResultBytes() {
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE - 1024, limits.maxBytes() - bytes.get()));
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        long now = System.nanoTime();
        boolean[] done = new boolean[1];
        records.computeIfPresent(id, (key, entry) -> {
            if (entry.live(now)
                    && !entry.record().completed()
                    && entry.record().token().equals(token)) {
                done[0] = true;
                return new Entry(entry.record(), until(now, lease));
            }
            return entry;
        });
        return done[0];
    }

    @Override
    public boolean complete(String id, String token, byte[] result, boolean failure, Duration retention) {
        long now = System.nanoTime();
        boolean[] done = new boolean[1];
        records.computeIfPresent(id, (key, entry) -> {
            IdempotencyRecord record = entry.record();
            if (entry.live(now) && record.token().equals(token)) {
                done[0] = true; // completed already: this completion, sent again
                if (record.completed()) {
                    return entry;
                }
                IdempotencyRecord completed =
                        new IdempotencyRecord(true, token, record.fingerprint(), result.clone(), failure);
                bytes.addAndGet(weight(key, completed) - weight(key, record));
                return new Entry(completed, until(now, retention));
            }
            return entry;
        });
        if (done[0]) {
            changed();
        }
        return done[0];
    }

    /** Removes the records that are over, at most once a minute. */
    private void sweepNowAndThen(long now) {
        long due = nextSweep.get();
        if (now - due < 0 || !nextSweep.compareAndSet(due, now + sweepEveryNanos)) {
            return;
        }
        sweep(now);
    }

    /** Removes the records that are over when the store is full, at most ten times a second. */
    private void sweepWhenFull(long now) {
        long due = nextFullSweep.get();
        if (now - due >= 0 && nextFullSweep.compareAndSet(due, now + FULL_SWEEP_EVERY_NANOS)) {
            sweep(now);
        }
    }

    private void sweep(long now) {
        for (Map.Entry<String, Entry> entry : records.entrySet()) {
            if (!entry.getValue().live(now)) {
                remove(entry.getKey(), entry.getValue());
            }
        }
    }

    /** Removes a record if it is still this entry, and counts it out. */
    private void remove(String id, Entry entry) {
        if (records.remove(id, entry)) {
            bytes.addAndGet(-weight(id, entry.record()));
        }
    }

    /** @return how many records this store holds, live or not yet swept (for tests) */
    int size() {
        return records.size();
    }

    @Override
    public boolean release(String id, String token) {
        long now = System.nanoTime();
        boolean[] done = new boolean[1];
        records.computeIfPresent(id, (key, entry) -> {
            if (entry.live(now)
                    && !entry.record().completed()
                    && entry.record().token().equals(token)) {
                done[0] = true;
            } else if (entry.live(now)) {
                return entry;
            }
            bytes.addAndGet(-weight(key, entry.record()));
            return null;
        });
        if (done[0]) {
            changed();
        }
        return done[0];
    }

    @Override
    public Optional<IdempotencyRecord> read(String id) {
        Entry entry = records.get(id);
        return entry != null && entry.live(System.nanoTime()) ? Optional.of(entry.record()) : Optional.empty();
    }

    private void changed() {
        changes.lock();
        try {
            changed.signalAll();
        } finally {
            changes.unlock();
        }
    }

    @Override
    public void awaitChange(String id, Duration atMost) throws InterruptedException {
        changes.lock();
        try {
            // Checked under the lock that completions signal under: no wake-up is lost in between.
            Entry entry = records.get(id);
            if (entry != null
                    && entry.live(System.nanoTime())
                    && !entry.record().completed()) {
                changed.await(Math.max(1, atMost.toNanos()), TimeUnit.NANOSECONDS);
            }
        } finally {
            changes.unlock();
        }
    }

    @Override
    public boolean notifiesChanges() {
        return true;
    }
}
