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
}
