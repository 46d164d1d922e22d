package io.cerberus.spi.support;

/**
 * An optional ability of a {@link KeyValueStore}: counters that only go up, across the store's
 * restarts, failovers and memory pressure. A store implements it only when that holds; the engine
 * built on it then gives {@link io.cerberus.Capability#FENCING fencing tokens}. A store that may
 * lose a counter (an evicted or restarted cache) must not implement it: a counter that starts again
 * at 1 hands out a token an earlier holder already had.
 */
public interface FencingCounter {

    /**
     * Adds one to the counter under {@code key}, which starts at 0, and returns the new value.
     *
     * @param key the counter's key, never a key of an entry of {@link KeyValueStore}
     * @return the new value, larger than every value returned before for that key
     */
    long increment(String key);
}
