package io.cerberus.redis;

import io.cerberus.CerberusException;
import io.cerberus.Fence;

/**
 * A fenced write or read of {@link FencedRedis} was refused: the data has already seen a newer fence, so
 * the caller's hold has passed to another holder (it was paused or cut off past its lease). Nothing was
 * written or read. The caller must not retry with the same fence: its work is stale; it may take the lock
 * again and start over.
 */
public class RedisStaleFenceException extends CerberusException {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final transient Fence refused;
    private final transient Fence newest;

    /**
     * @param key the data key
     * @param refused the caller's fence
     * @param newest the newest fence the key has seen, newer than {@code refused}
     */
    public RedisStaleFenceException(String key, Fence refused, Fence newest) {
        super("fenced Redis key '" + key + "' refused fence " + refused + ": it has seen the newer fence " + newest
                + ", so this holder's lock has passed to another holder; take the lock again and start over");
        this.key = key;
        this.refused = refused;
        this.newest = newest;
    }

    /** @return the data key */
    public String key() {
        return key;
    }

    /** @return the caller's fence, refused */
    public Fence refused() {
        return refused;
    }

    /** @return the newest fence the key has seen */
    public Fence newest() {
        return newest;
    }
}
