package io.cerberus.internal;

import io.cerberus.LockContention;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The waits of one client, per lock name, for {@link io.cerberus.Cerberus#contention()}: only
 * acquisitions that found their lock busy are counted, so an uncontended lock costs nothing here.
 *
 * <p>Bounded: at most {@link #NAMES} names are kept. A new name that comes when the table is full
 * takes the place of the name with the least total wait, so names that keep making callers wait
 * stay. Thread-safe (one monitor, taken only by contended acquisitions as they end).
 */
final class Contention {
    /** How many lock names are kept at most. */
    static final int NAMES = 256;

    private final Map<String, Entry> byName = new HashMap<>();

    private static final class Entry {
        long contended;
        long totalNanos;
        long longestNanos;
        long timedOut;
        String lastHolder = "";
    }

    /**
     * @param name the lock name
     * @param waitedNanos how long the acquisition took
     * @param timedOut whether it gave up because its wait ran out
     * @param holder who held the lock when it was found busy, or empty if not known
     */
    synchronized void record(String name, long waitedNanos, boolean timedOut, String holder) {
        Entry entry = byName.get(name);
        if (entry == null) {
            if (byName.size() >= NAMES) {
                byName.entrySet().stream()
                        .min(Comparator.comparingLong(e -> e.getValue().totalNanos))
                        .ifPresent(least -> byName.remove(least.getKey()));
            }
            entry = new Entry();
            byName.put(name, entry);
        }
        entry.contended++;
        entry.totalNanos += waitedNanos;
        entry.longestNanos = Math.max(entry.longestNanos, waitedNanos);
        if (timedOut) {
            entry.timedOut++;
        }
        if (!holder.isEmpty()) {
            entry.lastHolder = holder;
        }
    }

    /** @return the locks, the most total wait first */
    synchronized List<LockContention> snapshot() {
        List<LockContention> all = new ArrayList<>(byName.size());
        byName.forEach((name, entry) -> all.add(new LockContention(
                name,
                entry.contended,
                Duration.ofNanos(entry.totalNanos),
                Duration.ofNanos(entry.longestNanos),
                entry.timedOut,
                entry.lastHolder)));
        all.sort(Comparator.comparing(LockContention::totalWait).reversed().thenComparing(LockContention::name));
        return all;
    }
}
