package io.cerberus;

/**
 * Told when a lease is lost (expired, refused on renewal, session ended). Called once per lease,
 * on a Cerberus event thread, never while a Cerberus-internal lock is held; a listener that throws
 * is logged and does not affect other listeners.
 */
@FunctionalInterface
public interface LeaseLossListener {
    /**
     * @param lease the lease that was lost; {@link Lease#isValid()} is already false
     * @param reason why it was lost, the same exception {@link Lease#close()} will throw
     */
    void leaseLost(Lease lease, LockLostException reason);
}
