package io.cerberus;

import java.time.Duration;
import java.util.Objects;

/**
 * How much one lock made this client wait, since the client was built: what
 * {@link Cerberus#contention()} lists, most waited-for first.
 *
 * @param name the lock name
 * @param contended acquisitions that found the lock busy (granted after a wait, or given up)
 * @param totalWait their time from asking to grant or giving up, added up
 * @param longestWait the longest of them
 * @param timedOut how many of them gave up: the wait ran out
 * @param lastHolder who held the lock when an acquisition last found it busy, as the holder
 *     described itself; empty unless the client's metrics ask who holds a busy lock
 *     ({@link CerberusMetrics.WaitObserver#wantsHolder()})
 */
public record LockContention(
        String name, long contended, Duration totalWait, Duration longestWait, long timedOut, String lastHolder) {

    /** Checks that no component is {@code null}. */
    public LockContention {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(totalWait, "totalWait");
        Objects.requireNonNull(longestWait, "longestWait");
        Objects.requireNonNull(lastHolder, "lastHolder");
    }
}
