package io.cerberus.spi;

/**
 * What a release that knows the client's line did ({@link HandsOver#handOver},
 * {@link TakesTurns#release}): the holder's hold released, and the lock granted to the next attempt
 * in the same request, or released for a waiter of another client, or neither.
 *
 * @param released whether the holder still held the lock and no longer does
 * @param handed whether the next attempt now holds the lock
 * @param fencingToken the next attempt's fencing token when handed (-1 if the engine has none);
 *     -1 otherwise
 * @param yielded whether the lock was released for a waiter of another client: the client's line
 *     holds back ({@link TakesTurns#holdBack()})
 */
public record HandOff(boolean released, boolean handed, long fencingToken, boolean yielded) {
    /** Checks that a hand-off or a yield released the holder, and that nothing is both. */
    public HandOff {
        if ((handed || yielded) && !released) {
            throw new IllegalArgumentException(
                    "a hand-off or a yield releases the holder: handed or yielded needs released");
        }
        if (handed && yielded) {
            throw new IllegalArgumentException("a hand-off keeps the lock in the client: handed excludes yielded");
        }
    }

    /**
     * @param released whether the holder still held the lock and no longer does
     * @param handed whether the next attempt now holds the lock
     * @param fencingToken the next attempt's fencing token when handed, else -1
     */
    public HandOff(boolean released, boolean handed, long fencingToken) {
        this(released, handed, fencingToken, false);
    }

    /**
     * @param fencingToken the next attempt's fencing token, or -1 if the engine has none
     * @return the holder released and the next attempt granted
     */
    public static HandOff handed(long fencingToken) {
        return new HandOff(true, true, fencingToken, false);
    }

    /**
     * @param released whether the holder still held the lock and no longer does
     * @return not handed: released (or not held), as {@link LockEngine#release} answers
     */
    public static HandOff notHanded(boolean released) {
        return new HandOff(released, false, -1, false);
    }

    /** @return the holder released, and the lock left free for a waiter of another client */
    public static HandOff yieldedToOthers() {
        return new HandOff(true, false, -1, true);
    }
}
