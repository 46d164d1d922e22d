package io.cerberus.local;

import io.cerberus.spi.IdempotencyRecord;
import io.cerberus.spi.IdempotencyStore;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code mem:} idempotency store: records in this JVM, one map per store name, expiry on the
 * monotonic clock. Each change is one atomic {@code compute} of the record; completions and
 * releases wake waiting duplicates. Records that are over are swept at most once a minute, by a
 * claim.
 */
final class MemoryIdempotencyStore implements IdempotencyStore {
    private static final Map<String, MemoryIdempotencyStore> NAMED = new ConcurrentHashMap<>();

    private final Map<String, Entry> records = new ConcurrentHashMap<>();
    private final long sweepEveryNanos;
    private final java.util.concurrent.atomic.AtomicLong nextSweep = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
    /** Waiting duplicates wait on this; completions and releases wake them. */
    private final Object changes = new Object();

    /** A record and when it ends (Long.MAX_VALUE: never). */
    private record Entry(IdempotencyRecord record, long expiresAtNanos) {
        boolean live(long now) {
            return expiresAtNanos == Long.MAX_VALUE || now - expiresAtNanos < 0;
        }
    }

    /** @param sweepEvery how often a claim removes the records that are over */
    MemoryIdempotencyStore(Duration sweepEvery) {
        this.sweepEveryNanos = sweepEvery.toNanos();
    }

    static MemoryIdempotencyStore named(String name) {
        return NAMED.computeIfAbsent(name, n -> new MemoryIdempotencyStore(Duration.ofMinutes(1)));
    }

    private static long until(long now, Duration time) {
        if (time == null) {
            return Long.MAX_VALUE;
        }
        long nanos = time.toNanos();
        return now + nanos == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : now + nanos;
    }

    @Override
    public Optional<IdempotencyRecord> claim(String id, String fingerprint, String token, Duration lease) {
        long now = System.nanoTime();
        sweepNowAndThen(now);
        IdempotencyRecord[] existing = new IdempotencyRecord[1];
        records.compute(id, (key, entry) -> {
            if (entry != null && entry.live(now)) {
                if (!entry.record().completed() && entry.record().token().equals(token)) {
                    return new Entry(entry.record(), until(now, lease)); // our own claim, sent again
                }
                existing[0] = entry.record();
                return entry;
            }
            return new Entry(new IdempotencyRecord(false, token, fingerprint, null, false), until(now, lease));
        });
        return Optional.ofNullable(existing[0]);
    }

    @Override
    public boolean renew(String id, String token, Duration lease) {
        long now = System.nanoTime();
        boolean[] done = new boolean[1];
        records.computeIfPresent(id, (key, entry) -> {
            if (entry.live(now) && !entry.record().completed() && entry.record().token().equals(token)) {
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
                return record.completed() ? entry
                        : new Entry(new IdempotencyRecord(true, token, record.fingerprint(), result.clone(), failure), until(now, retention));
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
        records.entrySet().removeIf(entry -> !entry.getValue().live(now));
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
            if (entry.live(now) && !entry.record().completed() && entry.record().token().equals(token)) {
                done[0] = true;
                return null;
            }
            return entry.live(now) ? entry : null;
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
        synchronized (changes) {
            changes.notifyAll();
        }
    }

    @Override
    public void awaitChange(String id, Duration atMost) throws InterruptedException {
        synchronized (changes) {
            // Checked under the monitor that completions notify under: no wake-up is lost in between.
            Entry entry = records.get(id);
            if (entry != null && entry.live(System.nanoTime()) && !entry.record().completed()) {
                changes.wait(Math.max(1, atMost.toMillis()));
            }
        }
    }

    @Override
    public boolean notifiesChanges() {
        return true;
    }
}
