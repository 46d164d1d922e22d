package io.cerberus;

/**
 * One permit of a {@link Permits} handle: a numbered slot of the semaphore, with the fencing token
 * of this hold of it.
 *
 * <pre>{@code
 * for (Permit permit : permits.permits()) {
 *     rows.update(permit.fenceName(), permit.fencingToken(), change); // refused once the slot moved on
 * }
 * }</pre>
 */
public interface Permit {

    /** @return the slot, 0 to the semaphore's permits - 1 */
    int slot();

    /**
     * A number strictly larger than that of every earlier hold of the same slot of the same
     * semaphore on the same engine: fence the protected resource per slot, by {@link #fenceName()}.
     *
     * @return the fencing token
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens (Redlock)
     */
    long fencingToken();

    /**
     * The fence to give the protected resource, ordered across engine switches ({@link Lease#fence()}).
     *
     * @return this permit's fence
     * @throws UnsupportedCapabilityException if the engine gives no fencing tokens
     * @throws LockLostException if the permit was no longer valid when its engine's epoch was read
     * @throws EngineUnavailableException if the engine cannot be reached to read its epoch
     */
    Fence fence();

    /**
     * @return the name a protected resource fences this slot by: the semaphore's name, {@code #} and
     *     the slot ({@code partner-api#2})
     */
    String fenceName();
}
