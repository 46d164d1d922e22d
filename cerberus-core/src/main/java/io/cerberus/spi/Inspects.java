package io.cerberus.spi;

import io.cerberus.LockInfo;
import java.util.List;

/** An optional ability of a {@link LockEngine}: listing the current holds ({@link io.cerberus.Capability#INSPECT}). */
public interface Inspects {

    /**
     * @param namespace the namespace to list
     * @param prefix a lock-name prefix, empty for all
     * @return the holds, in any order
     */
    List<LockInfo> inspect(String namespace, String prefix);

    /**
     * The holds of one lock. The core asks it when an observed acquisition first finds a lock busy
     * ({@link io.cerberus.CerberusMetrics.WaitObserver#wantsHolder()}), so an engine whose
     * {@link #inspect} walks every key should answer this one from the lock's own keys.
     *
     * @param namespace the lock's namespace
     * @param name the lock name
     * @return its holds, in any order; empty when it is free
     */
    default List<LockInfo> inspectLock(String namespace, String name) {
        return inspect(namespace, name).stream()
                .filter(info -> info.name().equals(name))
                .toList();
    }
}
