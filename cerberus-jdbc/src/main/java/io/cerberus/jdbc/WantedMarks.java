package io.cerberus.jdbc;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What one lease-row engine knows of the <em>wanted marks</em> on its rows ({@code wanted_until}:
 * a refused client of another process wants the lock) and of its own holds, so that its release
 * can tell whether another process waits ({@link HandOverRelease}, turns in
 * {@link io.cerberus.spi.TakesTurns}). This engine's own mark, written while its own thread
 * waited, does not count as another's; a mark that replaced another client's mark still standing
 * is taken to stand for as long as that one would have.
 *
 * <p>Nothing here decides who holds: a wrong guess costs a turn given too early or too late. Both
 * maps are forgotten all at once when large (then any mark counts as another's, and any holder as
 * another engine's, until learned again).
 */
final class WantedMarks {
    /** The mark to pass when this engine wrote none: no mark in the database has this value. */
    static final long NO_MARK = -1;

    private static final int MAX_ENTRIES = 65_536;

    private final Map<String, Marks> byKey = new ConcurrentHashMap<>();
    private final Set<String> holds = ConcurrentHashMap.newKeySet();

    /** One row's marks as this engine knows them; guarded by itself. */
    private static final class Marks {
        /** The mark this engine last wrote on the row, or {@link #NO_MARK}. */
        long own = NO_MARK;
        /** Until when (this JVM's clock) a mark of another client is known to stand, or to have stood. */
        long othersUntil = System.nanoTime();
    }

    private Marks marks(String key) {
        if (byKey.size() >= MAX_ENTRIES) {
            byKey.clear();
        }
        return byKey.computeIfAbsent(key, k -> new Marks());
    }

    /** @param token an attempt granted by this engine and not released */
    void held(String token) {
        if (holds.size() >= MAX_ENTRIES) {
            holds.clear();
        }
        holds.add(token);
    }

    /** @param token an attempt of this engine whose hold ended (released, given up) */
    void ended(String token) {
        holds.remove(token);
    }

    /** @return whether {@code token} is a hold of this engine, granted and not released */
    boolean holds(String token) {
        return holds.contains(token);
    }

    /**
     * This engine marked the key's row wanted with {@code mark}, in place of {@code before}. If that
     * replaced a mark of another client that still stood, another client is taken to wait for as
     * long as that mark would have stood.
     *
     * @param mark the row's new {@code wanted_until}
     * @param before the row's {@code wanted_until} before
     * @param markMillis how long a mark stands: {@code mark} was written at {@code mark - markMillis}
     */
    void marked(String key, long mark, long before, long markMillis) {
        Marks marks = marks(key);
        synchronized (marks) {
            long stoodFor = before - (mark - markMillis);
            if (stoodFor > 0 && before != marks.own) {
                othersStand(marks, stoodFor);
            }
            marks.own = mark;
        }
    }

    /** @return the mark this engine last wrote on the key's row, or {@link #NO_MARK} */
    long ownMark(String key) {
        Marks marks = byKey.get(key);
        if (marks == null) {
            return NO_MARK;
        }
        synchronized (marks) {
            return marks.own;
        }
    }

    /**
     * @return the mark a hand-over may pass as this engine's own: {@link #NO_MARK} while a mark of
     *     another client is known to stand
     */
    long ownMarkToPass(String key) {
        Marks marks = byKey.get(key);
        if (marks == null) {
            return NO_MARK;
        }
        synchronized (marks) {
            return marks.othersUntil - System.nanoTime() > 0 ? NO_MARK : marks.own;
        }
    }

    /** @return whether a mark of another client is known to stand on the key's row now */
    boolean othersWait(String key) {
        Marks marks = byKey.get(key);
        if (marks == null) {
            return false;
        }
        synchronized (marks) {
            return marks.othersUntil - System.nanoTime() > 0;
        }
    }

    /** A mark of another client stands on the key's row for {@code millis} more (its exact value unknown). */
    void othersMarked(String key, long millis) {
        Marks marks = marks(key);
        synchronized (marks) {
            othersStand(marks, millis);
        }
    }

    private static void othersStand(Marks marks, long millis) {
        long now = System.nanoTime();
        marks.othersUntil = Math.max(marks.othersUntil - now, TimeUnit.MILLISECONDS.toNanos(millis)) + now;
    }
}
