package io.cerberus.spi;

/**
 * An optional ability of a {@link LockEngine} with fencing tokens: it keeps one number per namespace, the
 * <em>epoch</em>, which only goes up, so that the fences of its holds ({@link io.cerberus.Fence}: epoch, then token)
 * are ordered after those of another engine the namespace was switched away from. The core raises an engine's epoch
 * when a client switches to it, above every epoch the client has seen, and reads it for a hold's fence while the hold
 * is held (docs/FENCING.md says what that guarantees).
 *
 * <p>The state is bounded: one number per namespace, kept where the engine keeps its locks, surviving what the
 * engine's locks survive (a restart of a persistent store, a failover). Both calls are atomic in the store and
 * safe to repeat; they throw {@link io.cerberus.EngineUnavailableException} when the store cannot be reached.
 * An engine without this ability gives every fence epoch 0.
 */
public interface KeepsEpochs {

    /**
     * @param namespace the client's namespace
     * @return the namespace's epoch now, 0 if it was never raised
     */
    long epoch(String namespace);

    /**
     * Raises the namespace's epoch to {@code atLeast} if it is lower; never lowers it.
     *
     * @param namespace the client's namespace
     * @param atLeast the least epoch wanted, positive
     * @return the epoch after the call: {@code atLeast} or more
     */
    long raiseEpoch(String namespace, long atLeast);
}
