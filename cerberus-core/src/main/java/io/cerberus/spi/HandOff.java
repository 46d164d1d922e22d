package io.cerberus.spi;

/**
 * What {@link LockEngine#handOver} did: the holder's hold released, and the lock granted to the
 * next attempt in the same request, or not.
 *
 * @param released whether the holder still held the lock and no longer does
 * @param handed whether the next attempt now holds the lock
 * @param fencingToken the next attempt's fencing token when handed (-1 if the engine has none);
 *     -1 otherwise
 */
public record HandOff(boolean released, boolean handed, long fencingToken) {
    /** Checks that a hand-off released the holder. */
    public HandOff {
        if (handed && !released) {
            throw new IllegalArgumentException("a hand-off releases the holder: handed needs released");
        }
    }

    /**
     * @param fencingToken the next attempt's fencing token, or -1 if the engine has none
     * @return the holder released and the next attempt granted
     */
    public static HandOff handed(long fencingToken) {
        return new HandOff(true, true, fencingToken);
    }

    /**
     * @param released whether the holder still held the lock and no longer does
     * @return not handed: released (or not held), as {@link LockEngine#release} answers
     */
    public static HandOff notHanded(boolean released) {
        return new HandOff(released, false, -1);
    }
}
