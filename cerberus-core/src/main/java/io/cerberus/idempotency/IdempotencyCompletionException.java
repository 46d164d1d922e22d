package io.cerberus.idempotency;

import io.cerberus.CerberusException;

/**
 * The operation ran, but its result could not be recorded (the store failed, or the attempt's
 * lease ran out and another attempt took the key). The caller must know: a retry may run it again.
 */
public class IdempotencyCompletionException extends CerberusException {
    private static final long serialVersionUID = 1L;

    public IdempotencyCompletionException(String message, Throwable cause) {
        super(message, cause);
    }
}
