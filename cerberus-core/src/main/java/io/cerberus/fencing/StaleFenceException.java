package io.cerberus.fencing;

import io.cerberus.CerberusException;
import io.cerberus.Fence;

/**
 * A write or fenced read refused by a protected resource because it carried a fence older than the
 * newest the resource has seen: the caller's lock has passed to another holder since it was taken
 * (its lease ran out while it was paused, or it was freed by force), and what it was about to do
 * would undo the newer holder's work. Not to be retried with the same fence: take the lock again.
 */
public class StaleFenceException extends CerberusException {
    private static final long serialVersionUID = 1L;

    private final String resource;
    private final transient Fence refused;
    private final transient Fence newest;

    /**
     * @param resource what refused it (a file, a row, a key), for the message
     * @param refused the caller's fence
     * @param newest the newest fence the resource has seen
     */
    public StaleFenceException(String resource, Fence refused, Fence newest) {
        super(resource + " refused fence " + refused + ": it has seen " + newest
                + ", so the lock has passed to a newer holder since this one took it; take the lock again");
        this.resource = resource;
        this.refused = refused;
        this.newest = newest;
    }

    /** @return what refused it: a file, a row, a key, as the message names it */
    public String resource() {
        return resource;
    }

    /** @return the fence that was refused */
    public Fence refused() {
        return refused;
    }

    /** @return the newest fence the resource had seen */
    public Fence newest() {
        return newest;
    }
}
