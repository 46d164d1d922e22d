package io.cerberus.spi;

import java.time.Duration;

/**
 * An optional ability of a {@link LockEngine}: the core lines up this client's waiters for an
 * exclusive lock, so that only the first of them (the head) asks the engine and a release in this
 * client wakes the next one at once. An engine says so when exclusive waiters race in the store
 * (each asks again when told of a release): then a thread that releases and asks again cannot win
 * against the waiters of its own client, and a hand-off between them costs one acquire. An engine
 * that queues waiters in the store may say so too, to bound what one client queues there (etcd, ZooKeeper).
 * {@code tryLock()} without a wait still asks at once.
 *
 * <p>A busy answer that names the holder ({@link AcquireResult#busy(Duration, String, long)})
 * helps the line: when the holder is a live hold of the same client, the head waits for its
 * release instead of asking again.
 */
public interface LinesUpLocally {

    /**
     * The first pause of the head's backoff after a busy answer. Each pause is drawn from the upper
     * half of a ceiling that starts here and doubles up to {@link #maxBackoff()}; it never goes
     * past the busy answer's {@code retryWithin}, and it starts again from here when the answer
     * names a holder with a new fencing token (the lock changes hands elsewhere). The head spends
     * the pause in {@link LockEngine#awaitChange}.
     *
     * @return the first pause; zero (the default) for no backoff: the head waits as each busy
     *     answer says
     */
    default Duration firstBackoff() {
        return Duration.ZERO;
    }

    /** @return the longest pause of the head's backoff; ignored without a {@link #firstBackoff()} */
    default Duration maxBackoff() {
        return Duration.ZERO;
    }
}
