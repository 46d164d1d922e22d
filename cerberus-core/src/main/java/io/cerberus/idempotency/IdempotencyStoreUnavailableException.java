package io.cerberus.idempotency;

import io.cerberus.CerberusException;

/** The idempotency store could not be reached and the guard fails closed: the operation did not run. */
public class IdempotencyStoreUnavailableException extends CerberusException {
    private static final long serialVersionUID = 1L;

    public IdempotencyStoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
