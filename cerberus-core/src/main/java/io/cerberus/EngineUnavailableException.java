package io.cerberus;

/**
 * The lock engine could not be reached, or did not answer within the configured timeout. The
 * message names the engine URI (never its password) and how long Cerberus waited.
 */
public class EngineUnavailableException extends CerberusException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message which engine, what was attempted, how long it waited
     * @param cause the underlying failure, may be {@code null}
     */
    public EngineUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
