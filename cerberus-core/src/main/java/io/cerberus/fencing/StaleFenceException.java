package io.cerberus.fencing;

import io.cerberus.CerberusException;
import io.cerberus.Fence;

/**
 * A fenced change was refused because the resource has already seen a newer fence: the lease the
 * refused fence came from has passed to another holder, who has read or written since. Nothing was
 * changed. The holder must stop working on what the lock protects (its other changes in the same
 * transaction should be rolled back, which an uncaught runtime exception does in Spring), and may
 * acquire the lock again to start over.
 */
public class StaleFenceException extends CerberusException {
    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long refusedEpoch;
    private final long refusedToken;
    private final long newestEpoch;
    private final long newestToken;

    /**
     * @param resource what refused it, for the message (e.g. {@code accounts id='acc-1'})
     * @param refused the fence the change carried
     * @param newest the newest fence the resource has seen, newer than {@code refused}
     */
    public StaleFenceException(String resource, Fence refused, Fence newest) {
        super("stale fence " + refused + " refused by " + resource + ", which has seen fence " + newest
                + ": the lease of fence " + refused + " has passed to a newer holder; stop, and acquire the lock"
                + " again to start over");
        this.resource = resource;
        this.refusedEpoch = refused.epoch();
        this.refusedToken = refused.token();
        this.newestEpoch = newest.epoch();
        this.newestToken = newest.token();
    }

    /** @return what refused it (a file, a row, a key), as the message names it */
    public String resource() {
        return resource;
    }

    /** @return the fence the refused change carried */
    public Fence refused() {
        return new Fence(refusedEpoch, refusedToken);
    }

    /** @return the newest fence the resource had seen when it refused */
    public Fence newest() {
        return new Fence(newestEpoch, newestToken);
    }
}
