package io.cerberus;

/**
 * The engine was asked for something it cannot do (a fair lock, a read-write lock, a fencing
 * token...). The message names the capability and the engines that have it. Thrown at once,
 * before anything is sent to the engine.
 */
public class UnsupportedCapabilityException extends CerberusException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message which capability, which engine lacks it, which engines have it
     */
    public UnsupportedCapabilityException(String message) {
        super(message);
    }
}
