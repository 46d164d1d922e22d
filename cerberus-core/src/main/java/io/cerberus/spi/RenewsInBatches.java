package io.cerberus.spi;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * An optional ability of a {@link LockEngine}: renewing several holds in as few round trips as the
 * engine can (one script, one pipeline, one transaction). The core's renewer calls it with every
 * hold of the engine due at about the same time; without it, it renews them one by one.
 */
public interface RenewsInBatches {

    /**
     * Renews several holds, each as {@link LockEngine#renew} would.
     *
     * @param attempts holding attempts
     * @return the attempts that no longer hold their lock (not renewed)
     */
    Set<Acquisition> renewAll(Collection<Acquisition> attempts);

    /**
     * Renews holds one by one, for an engine without the ability or a batch too small for it.
     *
     * @param engine the engine
     * @param attempts holding attempts
     * @return the attempts that no longer hold their lock
     */
    static Set<Acquisition> oneByOne(LockEngine engine, Collection<Acquisition> attempts) {
        Set<Acquisition> lost = new HashSet<>();
        for (Acquisition attempt : attempts) {
            if (!engine.renew(attempt)) {
                lost.add(attempt);
            }
        }
        return lost;
    }
}
